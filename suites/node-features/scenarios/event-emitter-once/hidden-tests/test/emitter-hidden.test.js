'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { Emitter } = require('../lib/emitter');

test('a listener removing itself does not skip its neighbour', () => {
  const bus = new Emitter();
  const calls = [];
  const stop = bus.on('e', () => { calls.push('a'); stop(); });
  bus.on('e', () => calls.push('b'));
  bus.on('e', () => calls.push('c'));
  bus.emit('e');
  assert.deepEqual(calls, ['a', 'b', 'c']);
});

test('two once listeners in a row both run', () => {
  const bus = new Emitter();
  const calls = [];
  bus.once('e', () => calls.push(1));
  bus.once('e', () => calls.push(2));
  bus.on('e', () => calls.push(3));
  bus.emit('e');
  assert.deepEqual(calls, [1, 2, 3]);
});

test('a once listener that re-emits runs only once', () => {
  const bus = new Emitter();
  let n = 0;
  bus.once('e', () => {
    n++;
    bus.emit('e');
  });
  bus.emit('e');
  assert.equal(n, 1);
});

test('listeners added during an emit wait for the next emit', () => {
  const bus = new Emitter();
  const calls = [];
  bus.on('e', () => {
    calls.push('outer');
    bus.on('e', () => calls.push('late'));
  });
  bus.emit('e');
  assert.deepEqual(calls, ['outer']);
});

test('a listener removed by an earlier one in the same emit is not called', () => {
  const bus = new Emitter();
  const calls = [];
  const second = () => calls.push('second');
  bus.on('e', () => { calls.push('first'); bus.off('e', second); });
  bus.on('e', second);
  bus.emit('e');
  assert.deepEqual(calls, ['first']);
});

test('off removes one registration at a time', () => {
  const bus = new Emitter();
  let n = 0;
  const fn = () => n++;
  bus.on('e', fn);
  bus.on('e', fn);
  bus.off('e', fn);
  bus.emit('e');
  assert.equal(n, 1);
  assert.equal(bus.listenerCount('e'), 1);
});

test('the unsubscribe function of once() works before the event fires', () => {
  const bus = new Emitter();
  let n = 0;
  const stop = bus.once('e', () => n++);
  stop();
  bus.emit('e');
  assert.equal(n, 0);
});

test('an unhandled error event throws the error', () => {
  const bus = new Emitter();
  const boom = new Error('boom');
  assert.throws(() => bus.emit('error', boom), (e) => e === boom);
  let seen;
  bus.on('error', (e) => { seen = e; });
  assert.equal(bus.emit('error', boom), true);
  assert.equal(seen, boom);
});

test('event names that are Object.prototype keys are ordinary events', () => {
  const bus = new Emitter();
  assert.equal(bus.emit('constructor'), false);
  assert.equal(bus.listenerCount('toString'), 0);
  let n = 0;
  bus.on('__proto__', () => n++);
  bus.emit('__proto__');
  assert.equal(n, 1);
});

test('listener "this" is the emitter', () => {
  const bus = new Emitter();
  let self;
  bus.once('e', function () { self = this; });
  bus.emit('e');
  assert.equal(self, bus);
});
