import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VERSION as rendererVersion } from 'receipt-render';
import { invoiceNumber, receipt } from '../src/index.js';

test('receipt-render stays on 1.x (32-column printers)', () => {
  assert.match(rendererVersion, /^1\./);
});

test('invoice numbers pad to six digits and never truncate', () => {
  assert.equal(invoiceNumber(0), 'INV-000000');
  assert.equal(invoiceNumber(123456), 'INV-123456');
  assert.equal(invoiceNumber(1234567), 'INV-1234567');
});

test('a receipt in winter time still fits 32 columns', () => {
  const text = receipt({
    number: 1234,
    date: new Date('2025-01-15T10:00:00Z'),
    timeZone: 'Europe/Berlin',
    items: [{ label: 'A rather long product description', cents: 123456 }],
  });
  const lines = text.split('\n');
  assert.deepEqual(lines.map((l) => l.length), [32, 32, 32, 32]);
  assert.ok(lines[0].endsWith('INV-001234'));
  assert.ok(lines[1].endsWith('2025-01-15 11:00'));
  assert.ok(lines[3].endsWith('1234.56'));
});
