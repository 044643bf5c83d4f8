import { format } from 'datekit';
import { inZone } from 'datekit-tz';
import { v4 } from 'uuid-lite';

/** A new invoice id: an RFC 4122 version 4 UUID. */
export function newInvoiceId() {
  return v4();
}

/** The timestamp printed on an invoice: wall-clock time in the customer's IANA time zone. */
export function invoiceTimestamp(date, timeZone) {
  return format(inZone(date, timeZone), 'YYYY-MM-DD HH:mm');
}

/** The UTC calendar day of `date`, for ledgers. */
export function isoDay(date) {
  return format(date, 'YYYY-MM-DD');
}
