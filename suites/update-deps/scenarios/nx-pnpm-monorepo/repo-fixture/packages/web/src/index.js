import { invoiceTimestamp } from '@acme/core';
import { leftPad } from 'left-pad-str';
import { renderReceipt } from 'receipt-render';

/** "INV-000042": invoice numbers are zero-padded to six digits. */
export function invoiceNumber(n) {
  return `INV-${leftPad(String(n), 6, '0')}`;
}

/** The text sent to the shop's 32-column thermal receipt printers. */
export function receipt({ number, date, timeZone, items }) {
  const total = items.reduce((sum, item) => sum + item.cents, 0);
  const money = (cents) => (cents / 100).toFixed(2);
  return renderReceipt([
    ['Invoice', invoiceNumber(number)],
    ['Date', invoiceTimestamp(date, timeZone)],
    ...items.map((item) => [item.label, money(item.cents)]),
    ['TOTAL', money(total)],
  ]);
}
