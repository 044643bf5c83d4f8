'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { Emitter } = require('../lib/emitter');

test('listeners receive arguments in registration order', () => {
  const bus = new Emitter();
  const calls = [];
  bus.on('save', (a, b) => calls.push(['first', a, b]));
  bus.on('save', (a) => calls.push(['second', a]));
  assert.equal(bus.emit('save', 1, 2), true);
  assert.deepEqual(calls, [['first', 1, 2], ['second', 1]]);
  assert.equal(bus.emit('nothing'), false);
});

test('the function returned by on() unsubscribes', () => {
  const bus = new Emitter();
  let n = 0;
  const stop = bus.on('tick', () => n++);
  bus.emit('tick');
  stop();
  bus.emit('tick');
  assert.equal(n, 1);
});

test('a once listener does not make the next listener miss the event', () => {
  const bus = new Emitter();
  const calls = [];
  bus.once('ready', () => calls.push('once'));
  bus.on('ready', () => calls.push('always'));
  bus.emit('ready');
  bus.emit('ready');
  assert.deepEqual(calls, ['once', 'always', 'always']);
});

test('off() removes a listener added with once()', () => {
  const bus = new Emitter();
  let n = 0;
  const fn = () => n++;
  bus.once('x', fn);
  bus.off('x', fn);
  bus.emit('x');
  assert.equal(n, 0);
  assert.equal(bus.listenerCount('x'), 0);
});
