import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retry } from '../src/retry.js';

function recordingSleep() {
  const delays = [];
  const sleep = async (ms) => {
    delays.push(ms);
  };
  return { delays, sleep };
}

function failTimes(n, value = 'ok') {
  let calls = 0;
  const fn = async () => {
    calls += 1;
    if (calls <= n) throw new Error(`boom ${calls}`);
    return value;
  };
  return { fn, calls: () => calls };
}

test('returns the first success without sleeping', async () => {
  const { delays, sleep } = recordingSleep();
  assert.equal(await retry(async () => 42, { sleep }), 42);
  assert.deepEqual(delays, []);
});

test('retries counts retries after the first attempt', async () => {
  const { sleep } = recordingSleep();
  const op = failTimes(3);
  assert.equal(await retry(op.fn, { retries: 3, sleep }), 'ok');
  assert.equal(op.calls(), 4);
});

test('delays grow exponentially from minDelay', async () => {
  const { delays, sleep } = recordingSleep();
  await retry(failTimes(3).fn, { retries: 3, minDelay: 100, factor: 2, sleep });
  assert.deepEqual(delays, [100, 200, 400]);
});

test('the last error is rethrown unchanged', async () => {
  const { sleep } = recordingSleep();
  const op = failTimes(10);
  await assert.rejects(retry(op.fn, { retries: 2, sleep }), (err) => err.message === 'boom 3');
});
