'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { parse, stringify } = require('../lib');

test('leading "?" and empty segments are ignored', () => {
  assert.deepEqual({ ...parse('?a=1&&b=2&') }, { a: '1', b: '2' });
  assert.deepEqual({ ...parse('') }, {});
});

test('a key without "=" has an empty value', () => {
  assert.deepEqual({ ...parse('debug&x=1') }, { debug: '', x: '1' });
});

test('plus in keys and percent-encoded UTF-8', () => {
  const got = parse('full+name=J%C3%BCrgen+M%C3%BCller&emoji=%F0%9F%9A%80');
  assert.equal(got['full name'], 'Jürgen Müller');
  assert.equal(got.emoji, '🚀');
});

test('malformed escapes are kept instead of throwing', () => {
  assert.equal(parse('p=100%').p, '100%');
  assert.equal(parse('p=%zz%20ok').p, '%zz ok');
  assert.equal(parse('p=caf%C3').p, 'caf%C3');
});

test('"[]" suffix always gives an array', () => {
  assert.deepEqual(parse('tags[]=a').tags, ['a']);
  assert.deepEqual(parse('tags[]=a&tags[]=b').tags, ['a', 'b']);
  assert.deepEqual(parse('tags%5B%5D=a').tags, ['a']);
});

test('__proto__ is an ordinary key and pollutes nothing', () => {
  const got = parse('__proto__=x&constructor=y&toString=z');
  assert.equal(got.__proto__, 'x');
  assert.equal(got.constructor, 'y');
  assert.equal(got.toString, 'z');
  assert.equal({}.x, undefined);
  const polluted = parse('__proto__[polluted]=1&__proto__=2');
  assert.equal({}.polluted, undefined);
  assert.equal(Object.prototype.polluted, undefined);
  assert.ok(polluted);
});

test('hasOwnProperty as a key does not break later keys', () => {
  const got = parse('hasOwnProperty=1&a=2&a=3');
  assert.deepEqual(got.a, ['2', '3']);
});

test('stringify skips undefined and empty arrays, keeps null as a bare key', () => {
  assert.equal(stringify({ a: undefined, b: [], c: null, d: 0, e: false }), 'c&d=0&e=false');
});

test('stringify encodes reserved characters', () => {
  assert.equal(stringify({ 'a&b': 'c=d', q: 'x+y/z?' }), 'a%26b=c%3Dd&q=x%2By%2Fz%3F');
});

test('round trip', () => {
  const params = { q: 'rock & roll = 100%', tag: ['a b', 'ü'], page: '2' };
  assert.deepEqual({ ...parse(stringify(params)) }, params);
});
