import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepMerge, loadConfig } from '../src/index.js';

test('nested objects merge key by key', () => {
  const got = deepMerge({ a: { x: 1, y: 2 }, b: 1 }, { a: { y: 3, z: 4 } });
  assert.deepEqual(got, { a: { x: 1, y: 3, z: 4 }, b: 1 });
});

test('arrays are replaced, not merged index by index', () => {
  const got = deepMerge({ list: [1, 2, 3] }, { list: [9] });
  assert.deepEqual(got, { list: [9] });
  assert.ok(Array.isArray(got.list));
});

test('loading a config never changes the defaults', () => {
  const first = loadConfig('{"server": {"port": 9000}}');
  assert.equal(first.server.port, 9000);
  const second = loadConfig('{}');
  assert.equal(second.server.port, 8080);
});

test('environment overrides win over the file', () => {
  const cfg = loadConfig('{"log": {"level": "debug"}}', { log: { level: 'warn' } });
  assert.equal(cfg.log.level, 'warn');
  assert.equal(cfg.server.host, '127.0.0.1');
});
