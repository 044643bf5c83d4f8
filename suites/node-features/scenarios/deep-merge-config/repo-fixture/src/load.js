import { deepMerge } from './merge.js';

export const DEFAULTS = Object.freeze({
  server: { host: '127.0.0.1', port: 8080, cors: { origins: [] } },
  log: { level: 'info' },
});

/**
 * Combine the defaults, a parsed JSON config file and overrides derived from the
 * environment (later layers win). The defaults are never modified.
 */
export function loadConfig(fileText = '{}', envOverrides = {}) {
  const fromFile = JSON.parse(fileText);
  return deepMerge(DEFAULTS, fromFile, envOverrides);
}
