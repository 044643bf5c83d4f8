export const VERSION = '1.4.2';

const pad = (n, width = 2) => String(n).padStart(width, '0');

/** format(date, pattern): tokens YYYY MM DD HH mm ss, read from the date's UTC fields. */
export function format(date, pattern) {
  const fields = {
    YYYY: pad(date.getUTCFullYear(), 4),
    MM: pad(date.getUTCMonth() + 1),
    DD: pad(date.getUTCDate()),
    HH: pad(date.getUTCHours()),
    mm: pad(date.getUTCMinutes()),
    ss: pad(date.getUTCSeconds()),
  };
  return pattern.replace(/YYYY|MM|DD|HH|mm|ss/g, (token) => fields[token]);
}

export function parseISO(text) {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new RangeError(`not an ISO date: ${text}`);
  return date;
}
