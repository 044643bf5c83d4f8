import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION as datekitVersion } from 'datekit';
import { VERSION as tzVersion } from 'datekit-tz';
import { invoiceTimestamp, isoDay, newInvoiceId } from '../src/index.js';

test('core runs on the stable datekit 2.1 line with a matching datekit-tz', () => {
  assert.match(datekitVersion, /^2\.1\.\d+$/);
  assert.match(tzVersion, /^2\.1\.\d+$/);
});

test('time zones across daylight-saving changes and half-hour offsets', () => {
  // New York switches to daylight time at 07:00 UTC on 2025-03-09.
  assert.equal(invoiceTimestamp(new Date('2025-03-09T06:59:00Z'), 'America/New_York'), '2025-03-09 01:59');
  assert.equal(invoiceTimestamp(new Date('2025-03-09T07:00:00Z'), 'America/New_York'), '2025-03-09 03:00');
  assert.equal(invoiceTimestamp(new Date('2025-06-01T00:00:00Z'), 'Asia/Kolkata'), '2025-06-01 05:30');
  assert.equal(invoiceTimestamp(new Date('2025-06-01T00:00:00Z'), '+05:45'), '2025-06-01 05:45');
});

test('the UTC day does not depend on a time zone', () => {
  assert.equal(isoDay(new Date('2025-12-31T23:59:59Z')), '2025-12-31');
});

test('ids come from a cryptographic source', () => {
  const a = newInvoiceId();
  const b = newInvoiceId();
  assert.notEqual(a, b);
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});
