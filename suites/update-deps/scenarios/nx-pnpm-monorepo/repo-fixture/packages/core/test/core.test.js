import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invoiceTimestamp, isoDay, newInvoiceId } from '../src/index.js';

test('isoDay is the UTC day', () => {
  assert.equal(isoDay(new Date('2025-03-30T23:30:00Z')), '2025-03-30');
});

test('invoice timestamps use the customer time zone, daylight saving included', () => {
  assert.equal(invoiceTimestamp(new Date('2025-07-01T10:00:00Z'), 'Europe/Berlin'), '2025-07-01 12:00');
  assert.equal(invoiceTimestamp(new Date('2025-01-15T10:00:00Z'), 'Europe/Berlin'), '2025-01-15 11:00');
});

test('invoice ids are RFC 4122 version 4 UUIDs', () => {
  const ids = new Set();
  for (let i = 0; i < 200; i++) {
    const id = newInvoiceId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    ids.add(id);
  }
  assert.equal(ids.size, 200);
});
