export const VERSION = '2.1.0';

function offsetMinutesFor(date, zone) {
  const m = /^([+-])(\d\d):(\d\d)$/.exec(zone);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  let parts;
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit',
    }).formatToParts(date);
  } catch {
    throw new RangeError(`unknown time zone ${JSON.stringify(zone)}`);
  }
  const get = (type) => Number(parts.find((p) => p.type === type).value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((wall - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
}

/**
 * inZone(date, zone): a Date whose UTC fields show the wall-clock time in `zone`, an IANA
 * name ("Europe/Berlin", daylight saving included) or a fixed offset ("+02:00").
 */
export function inZone(date, zone) {
  return new Date(date.getTime() + offsetMinutesFor(date, zone) * 60_000);
}

export function offsetMinutes(date, zone) {
  return offsetMinutesFor(date, zone);
}
