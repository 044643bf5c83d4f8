'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { parse, stringify } = require('../lib');

test('simple pairs', () => {
  assert.deepEqual({ ...parse('a=1&b=two') }, { a: '1', b: 'two' });
});

test('values may contain "="', () => {
  assert.equal(parse('token=abc==&sig=x=y').token, 'abc==');
  assert.equal(parse('token=abc==&sig=x=y').sig, 'x=y');
});

test('plus means space', () => {
  assert.equal(parse('q=hello+world').q, 'hello world');
  assert.equal(parse('q=1%2B1').q, '1+1');
});

test('repeated keys collect into an array', () => {
  assert.deepEqual(parse('id=1&id=2&id=3').id, ['1', '2', '3']);
});

test('arrays stringify as repeated keys', () => {
  assert.equal(stringify({ id: ['1', '2'], q: 'a b' }), 'id=1&id=2&q=a%20b');
});
