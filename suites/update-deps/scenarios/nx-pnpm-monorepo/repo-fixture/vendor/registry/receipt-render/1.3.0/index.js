export const VERSION = '1.3.0';

/** renderReceipt(rows, { width }): one line per [label, value] row, value right-aligned to `width` columns. */
export function renderReceipt(rows, { width = 32 } = {}) {
  return rows
    .map(([label, value]) => {
      const text = String(value);
      const room = Math.max(1, width - text.length);
      return String(label).slice(0, room - 1).padEnd(room) + text;
    })
    .join('\n');
}
