export const VERSION = '3.0.0';

/** padStart(value, { width, fill }): `value` as a string, padded on the left to `width` characters. */
export function padStart(value, { width, fill = ' ' } = {}) {
  if (!Number.isInteger(width) || width < 0) throw new TypeError('width must be a non-negative integer');
  return String(value).padStart(width, fill);
}
