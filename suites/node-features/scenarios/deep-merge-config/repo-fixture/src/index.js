export { deepMerge } from './merge.js';
export { loadConfig } from './load.js';
