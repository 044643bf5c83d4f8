/**
 * Retry an async operation with exponential backoff.
 *
 * `fn(attempt)` is called with the attempt number (1 for the first call). After a failure
 * the next attempt waits `minDelay * factor ** (n - 1)` ms for the n-th retry, capped at
 * `maxDelay`. `retries` is the number of retries after the first attempt.
 *
 * An error carrying a numeric `retryAfterMs` (e.g. from an HTTP 429 Retry-After header)
 * waits at least that long, still capped at `maxDelay`. An AbortSignal in `signal` stops
 * the loop before an attempt or during a wait; the promise then rejects with
 * `signal.reason`.
 */

function defaultSleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export async function retry(fn, options = {}) {
  const {
    retries = 3,
    minDelay = 100,
    factor = 2,
    maxDelay = 10_000,
    shouldRetry = () => true,
    onRetry = () => {},
    sleep = defaultSleep,
    signal,
  } = options;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new RangeError('retries must be a non-negative integer');
  }

  for (let attempt = 1; ; attempt += 1) {
    signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      // A caller's abort is not a failure of the operation: never retry it.
      if (signal?.aborted) throw signal.reason;
      if (attempt > retries || !shouldRetry(err, attempt)) throw err;
      let delay = Math.min(maxDelay, minDelay * factor ** (attempt - 1));
      const hinted = err?.retryAfterMs;
      if (typeof hinted === 'number' && Number.isFinite(hinted) && hinted > delay) {
        delay = Math.min(maxDelay, hinted);
      }
      onRetry(err, attempt, delay);
      await sleep(delay, signal);
      signal?.throwIfAborted();
    }
  }
}
