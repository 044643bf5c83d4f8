export const VERSION = '2.0.0';

/** renderReceipt(rows, { columns }): laid out for 48-column printers by default. `width` was renamed `columns`. */
export function renderReceipt(rows, { columns = 48 } = {}) {
  return rows
    .map(([label, value]) => {
      const text = String(value);
      const room = Math.max(1, columns - text.length);
      return String(label).slice(0, room - 1).padEnd(room) + text;
    })
    .join('\n');
}
