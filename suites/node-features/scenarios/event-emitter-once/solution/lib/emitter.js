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
 *
 * Each registration is a record { fn, once }, so the same function can be registered
 * several times and removed one registration at a time, and once-listeners can be found
 * by the function the caller passed.
 */
class Emitter {
  constructor() {
    // A Map, so events named "__proto__" or "constructor" are ordinary keys.
    this.listeners = new Map();
  }

  _add(event, fn, once) {
    if (typeof fn !== 'function') throw new TypeError('listener must be a function');
    const record = { fn, once, removed: false };
    // Copy on write, like _remove: an emit in progress keeps iterating its own snapshot.
    this.listeners.set(event, [...(this.listeners.get(event) || []), record]);
    return () => this._remove(event, record);
  }

  _remove(event, record) {
    const list = this.listeners.get(event);
    if (!list) return;
    const i = list.indexOf(record);
    if (i === -1) return;
    record.removed = true;
    const next = list.slice(0, i).concat(list.slice(i + 1));
    if (next.length === 0) this.listeners.delete(event);
    else this.listeners.set(event, next);
  }

  on(event, fn) {
    return this._add(event, fn, false);
  }

  once(event, fn) {
    return this._add(event, fn, true);
  }

  off(event, fn) {
    const list = this.listeners.get(event);
    if (!list) return;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i].fn === fn) {
        this._remove(event, list[i]);
        return;
      }
    }
  }

  emit(event, ...args) {
    const list = this.listeners.get(event);
    if (!list || list.length === 0) {
      if (event === 'error') {
        throw args[0] instanceof Error ? args[0] : new Error(`Unhandled error event: ${String(args[0])}`);
      }
      return false;
    }
    for (const record of list) {
      if (record.removed) continue;
      // Remove a once-listener before calling it, so a re-entrant emit cannot run it twice.
      if (record.once) this._remove(event, record);
      record.fn.apply(this, args);
    }
    return true;
  }

  listenerCount(event) {
    return (this.listeners.get(event) || []).length;
  }
}

module.exports = { Emitter };
