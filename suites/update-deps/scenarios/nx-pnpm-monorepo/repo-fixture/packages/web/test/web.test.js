import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invoiceNumber, receipt } from '../src/index.js';

test('invoice numbers are zero-padded', () => {
  assert.equal(invoiceNumber(42), 'INV-000042');
});

test('receipts fit 32-column printers', () => {
  const text = receipt({
    number: 7,
    date: new Date('2025-07-01T10:00:00Z'),
    timeZone: 'Europe/Berlin',
    items: [{ label: 'Espresso', cents: 250 }, { label: 'Croissant', cents: 310 }],
  });
  const lines = text.split('\n');
  assert.equal(lines.length, 5);
  for (const line of lines) assert.equal(line.length, 32);
  assert.equal(lines[1], `Date${' '.repeat(12)}2025-07-01 12:00`);
  assert.ok(lines[4].startsWith('TOTAL') && lines[4].endsWith('5.60'));
});
