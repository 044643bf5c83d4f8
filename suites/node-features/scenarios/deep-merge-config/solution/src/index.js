export { deepMerge, MERGE_OPTIONS } from './merge.js';
export { loadConfig } from './load.js';
