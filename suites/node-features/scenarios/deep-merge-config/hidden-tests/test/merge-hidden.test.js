import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepMerge, loadConfig, MERGE_OPTIONS } from '../src/index.js';

test('__proto__ in parsed JSON does not pollute Object.prototype', () => {
  const evil = JSON.parse('{"__proto__": {"polluted": "yes"}, "a": {"__proto__": {"deep": 1}}}');
  const got = deepMerge({ a: {} }, evil);
  assert.equal({}.polluted, undefined);
  assert.equal({}.deep, undefined);
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
  assert.equal(got.polluted, undefined);
});

test('constructor.prototype cannot be reached through a config file', () => {
  loadConfig('{"constructor": {"prototype": {"isAdmin": true}}}');
  assert.equal({}.isAdmin, undefined);
});

test('inputs are left untouched and share nothing with the result', () => {
  const base = { a: { list: [1, 2] } };
  const over = { a: { b: { c: 1 } } };
  const got = deepMerge(base, over);
  got.a.list.push(3);
  got.a.b.c = 99;
  assert.deepEqual(base, { a: { list: [1, 2] } });
  assert.deepEqual(over, { a: { b: { c: 1 } } });
});

test('undefined leaves the value, null replaces it', () => {
  const got = deepMerge({ a: 1, b: { c: 2 }, d: 3 }, { a: undefined, b: null });
  assert.deepEqual(got, { a: 1, b: null, d: 3 });
});

test('Dates and Maps are values, not objects to merge into', () => {
  const when = new Date('2025-01-01T00:00:00Z');
  const map = new Map([['k', 1]]);
  const got = deepMerge({ when: new Date(0), map: new Map() }, { when, map });
  assert.ok(got.when instanceof Date);
  assert.equal(got.when.getTime(), when.getTime());
  assert.equal(got.map.get('k'), 1);
});

test('an object replaces a scalar and a scalar replaces an object', () => {
  assert.deepEqual(deepMerge({ a: 1 }, { a: { b: 2 } }), { a: { b: 2 } });
  assert.deepEqual(deepMerge({ a: { b: 2 } }, { a: 'flat' }), { a: 'flat' });
  assert.deepEqual(deepMerge({ a: [1] }, { a: { 0: 'x' } }), { a: { 0: 'x' } });
});

test('many sources, later wins', () => {
  assert.deepEqual(deepMerge({ a: 1 }, { a: 2, b: 1 }, { b: 2 }, { c: 3 }), { a: 2, b: 2, c: 3 });
});

test('arrays concat when asked', () => {
  const got = deepMerge({ tags: ['a'], n: { t: [1] } }, { tags: ['b'], n: { t: [2] } }, { [MERGE_OPTIONS]: { arrays: 'concat' } });
  assert.deepEqual(got, { tags: ['a', 'b'], n: { t: [1, 2] } });
});

test('the defaults stay usable after a config with nested overrides', () => {
  loadConfig('{"server": {"cors": {"origins": ["https://example.test"]}}}');
  assert.deepEqual(loadConfig().server.cors.origins, []);
});
