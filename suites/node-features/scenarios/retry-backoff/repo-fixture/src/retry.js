/**
 * Retry an async operation with exponential backoff.
 *
 * `fn(attempt)` is called with the attempt number (1 for the first call). After a failure
 * the next attempt waits `minDelay * factor ** (n - 1)` ms for the n-th retry, capped at
 * `maxDelay`. `retries` is the number of retries after the first attempt.
 */

const defaultSleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function retry(fn, options = {}) {
  const {
    retries = 3,
    minDelay = 100,
    factor = 2,
    maxDelay = 10_000,
    shouldRetry = () => true,
    onRetry = () => {},
    sleep = defaultSleep,
  } = options;

  let attempt = 0;
  while (true) {
    attempt += 1;
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= retries || !shouldRetry(err, attempt)) {
        throw new Error(`retry failed after ${attempt} attempts: ${err.message}`);
      }
      const delay = minDelay * factor ** attempt;
      onRetry(err, attempt, delay);
      await sleep(delay);
    }
  }
}
