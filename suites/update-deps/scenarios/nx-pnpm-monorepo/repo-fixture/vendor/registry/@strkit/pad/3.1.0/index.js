export const VERSION = '3.1.0';

function check(width) {
  if (!Number.isInteger(width) || width < 0) throw new TypeError('width must be a non-negative integer');
}

/** padStart(value, { width, fill }): `value` as a string, padded on the left to `width` characters. */
export function padStart(value, { width, fill = ' ' } = {}) {
  check(width);
  return String(value).padStart(width, fill);
}

/** padEnd(value, { width, fill }): padded on the right. Added in 3.1.0. */
export function padEnd(value, { width, fill = ' ' } = {}) {
  check(width);
  return String(value).padEnd(width, fill);
}
