export const VERSION = '1.4.2';

/**
 * inZone(date, offset): a Date whose UTC fields show the wall-clock time at a fixed offset
 * such as "+02:00". 1.x supports fixed offsets only.
 */
export function inZone(date, offset) {
  const m = /^([+-])(\d\d):(\d\d)$/.exec(offset);
  if (!m) throw new RangeError(`datekit-tz 1.x supports fixed offsets like "+02:00" only, got ${JSON.stringify(offset)}`);
  const minutes = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return new Date(date.getTime() + minutes * 60_000);
}
