/**
 * deepMerge(target, ...sources) -> a new object.
 *
 * Plain objects are merged key by key, recursively; later sources win. Every other value
 * (arrays, Dates, Maps, class instances, null) replaces what was there, unless the
 * `arrays: 'concat'` option is given as the last argument (`{ [MERGE_OPTIONS]: ... }`).
 * An `undefined` value in a source leaves the existing value alone. Inputs are never
 * modified, and the result shares no plain objects or arrays with them.
 *
 * Keys that could reach a prototype (`__proto__`, `constructor`, `prototype`) are skipped:
 * sources are often parsed JSON from outside, where `{"__proto__": {...}}` is an own key.
 */
export const MERGE_OPTIONS = Symbol('deepMerge.options');

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function cloneValue(value) {
  if (Array.isArray(value)) return value.map(cloneValue);
  if (isPlainObject(value)) return mergeInto({}, value, 'replace');
  return value; // Dates, Maps, class instances: kept by reference, never taken apart
}

function mergeInto(out, source, arrays) {
  for (const key of Object.keys(source)) {
    if (FORBIDDEN_KEYS.has(key)) continue;
    const value = source[key];
    if (value === undefined) continue;
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    if (isPlainObject(value) && isPlainObject(current)) {
      out[key] = mergeInto(current, value, arrays);
    } else if (arrays === 'concat' && Array.isArray(value) && Array.isArray(current)) {
      out[key] = [...current, ...value.map(cloneValue)];
    } else {
      out[key] = cloneValue(value);
    }
  }
  return out;
}

export function deepMerge(target, ...sources) {
  let arrays = 'replace';
  const last = sources.at(-1);
  if (last && typeof last === 'object' && MERGE_OPTIONS in last) {
    sources = sources.slice(0, -1);
    arrays = last[MERGE_OPTIONS]?.arrays ?? 'replace';
  }
  // The result is built from fresh objects: cloning the target first means every nested
  // object merged into later is ours to modify.
  const out = mergeInto({}, target ?? {}, arrays);
  for (const source of sources) {
    if (source == null) continue;
    mergeInto(out, source, arrays);
  }
  return out;
}
