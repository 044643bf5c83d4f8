import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retry } from '../src/retry.js';

function recordingSleep() {
  const delays = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

test('delays are capped at maxDelay', async () => {
  const { delays, sleep } = recordingSleep();
  let n = 0;
  await retry(async () => {
    if (++n < 7) throw new Error('x');
    return n;
  }, { retries: 6, minDelay: 100, factor: 3, maxDelay: 2000, sleep });
  assert.deepEqual(delays, [100, 300, 900, 2000, 2000, 2000]);
});

test('retries: 0 means a single attempt', async () => {
  let n = 0;
  const err = new Error('once');
  await assert.rejects(retry(async () => { n++; throw err; }, { retries: 0, sleep: async () => {} }), (e) => e === err);
  assert.equal(n, 1);
});

test('shouldRetry false stops at once with the original error', async () => {
  const fatal = Object.assign(new Error('bad request'), { status: 400 });
  let n = 0;
  await assert.rejects(
    retry(async () => { n++; throw fatal; }, { shouldRetry: (e) => e.status >= 500, sleep: async () => {} }),
    (e) => e === fatal,
  );
  assert.equal(n, 1);
});

test('onRetry sees the error, the attempt number and the delay', async () => {
  const seen = [];
  let n = 0;
  await retry(async () => { if (++n < 3) throw new Error(`e${n}`); }, {
    minDelay: 10,
    sleep: async () => {},
    onRetry: (err, attempt, delay) => seen.push([err.message, attempt, delay]),
  });
  assert.deepEqual(seen, [['e1', 1, 10], ['e2', 2, 20]]);
});

test('retryAfterMs on the error lengthens the wait, within maxDelay', async () => {
  const { delays, sleep } = recordingSleep();
  let n = 0;
  await retry(async () => {
    n++;
    if (n === 1) throw Object.assign(new Error('429'), { retryAfterMs: 1500 });
    if (n === 2) throw Object.assign(new Error('429'), { retryAfterMs: 60_000 });
    if (n === 3) throw Object.assign(new Error('429'), { retryAfterMs: 1 });
    return 'done';
  }, { minDelay: 100, maxDelay: 5000, sleep });
  assert.deepEqual(delays, [1500, 5000, 400]);
});

test('an already aborted signal prevents any attempt', async () => {
  const controller = new AbortController();
  controller.abort(new Error('cancelled by user'));
  let n = 0;
  await assert.rejects(retry(async () => { n++; }, { signal: controller.signal }), /cancelled by user/);
  assert.equal(n, 0);
});

test('aborting during the real backoff wait rejects promptly', async () => {
  const controller = new AbortController();
  let n = 0;
  const started = Date.now();
  setTimeout(() => controller.abort(), 30);
  await assert.rejects(
    retry(async () => { n++; throw new Error('down'); }, { retries: 1, minDelay: 2000, signal: controller.signal }),
    (e) => e.name === 'AbortError',
  );
  assert.equal(n, 1);
  // A wait that ignored the signal would take the full two seconds.
  assert.ok(Date.now() - started < 1500);
});
