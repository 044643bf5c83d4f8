export const VERSION = '2.1.0';

const pad = (n, width = 2) => String(n).padStart(width, '0');

/**
 * formatDate(date, { pattern }): tokens YYYY MM DD HH mm ss, read from the date's UTC fields.
 * Replaces format(date, pattern), removed in 2.0.0.
 */
export function formatDate(date, { pattern = 'YYYY-MM-DD' } = {}) {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new TypeError('formatDate expects a valid Date');
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
