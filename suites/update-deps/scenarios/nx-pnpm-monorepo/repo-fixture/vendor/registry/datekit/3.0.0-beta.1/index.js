export const VERSION = '3.0.0-beta.1';

/** Preview of 3.0: formatting moves to a Temporal-style API. Not for production use. */
export function formatInstant(instant, options = {}) {
  throw new Error('datekit 3.0.0-beta.1: formatInstant is not implemented yet');
}
