import { randomUUID } from 'node:crypto';
import { formatDate } from 'datekit';
import { inZone } from 'datekit-tz';

/** A new invoice id: an RFC 4122 version 4 UUID. */
export function newInvoiceId() {
  return randomUUID();
}

/** The timestamp printed on an invoice: wall-clock time in the customer's IANA time zone. */
export function invoiceTimestamp(date, timeZone) {
  return formatDate(inZone(date, timeZone), { pattern: 'YYYY-MM-DD HH:mm' });
}

/** The UTC calendar day of `date`, for ledgers. */
export function isoDay(date) {
  return formatDate(date, { pattern: 'YYYY-MM-DD' });
}
