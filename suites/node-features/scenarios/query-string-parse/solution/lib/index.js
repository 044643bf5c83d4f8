'use strict';

/**
 * parse('a=1&b=x+y') -> { a: '1', b: 'x y' }
 *
 * Query strings use application/x-www-form-urlencoded rules: '+' is a space, '%XX' is a
 * percent-encoded UTF-8 byte. A key given more than once, or written with a '[]' suffix,
 * becomes an array of its values in order.
 *
 * The result has no prototype, so keys such as '__proto__' or 'constructor' are plain
 * data and cannot reach Object.prototype.
 */
function decode(text) {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Malformed escapes (e.g. '%zz' or a truncated UTF-8 sequence): decode what can be
    // decoded and keep the rest as written instead of failing the whole request.
    return spaced.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

function parse(query) {
  const result = Object.create(null);
  const text = String(query ?? '').replace(/^\?/, '');
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    let key = decode(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decode(part.slice(eq + 1));
    let forceArray = false;
    if (key.endsWith('[]')) {
      key = key.slice(0, -2);
      forceArray = true;
    }
    const existing = result[key];
    if (existing === undefined) {
      result[key] = forceArray ? [value] : value;
    } else if (Array.isArray(existing)) {
      existing.push(value);
    } else {
      result[key] = [existing, value];
    }
  }
  return result;
}

/**
 * stringify({ a: '1', tags: ['x', 'y'] }) -> 'a=1&tags=x&tags=y'
 *
 * Keys keep their insertion order; `undefined` values and empty arrays are left out;
 * `null` gives the bare key.
 */
function stringify(params) {
  const parts = [];
  for (const [key, raw] of Object.entries(params)) {
    const values = Array.isArray(raw) ? raw : [raw];
    for (const value of values) {
      if (value === undefined) continue;
      const k = encodeURIComponent(key);
      parts.push(value === null ? k : `${k}=${encodeURIComponent(String(value))}`);
    }
  }
  return parts.join('&');
}

module.exports = { parse, stringify };
