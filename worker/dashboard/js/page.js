// The pieces a page is made of, beyond core.js's widgets: the heading, what to run when there
// is nothing to show, a chart's box, notes, a value with its interval, a box that waits for an
// API answer, and links to a batch's runs. Data reaches the DOM as text only.

import {h, fmt, errorBox, spinner, ready} from './core.js';

/** <h1> and a one-line explanation under it. */
export function heading(title, subtitle) {
  return [h('h1', null, title), subtitle ? h('p', {class: 'subtitle'}, subtitle) : null];
}

/** What to run to get data: a sentence and the commands, each on its own line. */
export function emptyState(message, ...commands) {
  return h('section', {class: 'section empty-state', 'data-empty': 'true'},
           h('p', null, message),
           commands.length ? h('pre', null, h('code', null, commands.join('\n'))) : null);
}

/** A chart in a box of a readable width: the SVG scales to its box, at most maxWidth wide and
 *  never narrower than minWidth (a phone scrolls the box sideways rather than shrink the text). */
export function chartBox(chart, maxWidth = '860px', minWidth = '520px') {
  return h('div', {class: 'chart-box', style: {'max-width': maxWidth, 'overflow-x': 'auto'}},
           h('div', {style: {'min-width': minWidth}}, chart));
}

/** The notes of an API answer as a list, or null when there are none. */
export function notesList(notes) {
  const list = (notes || []).filter(Boolean);
  if (!list.length) return null;
  return h('ul', {class: 'notes'}, list.map((n) => h('li', null, String(n))));
}

/** Value and its interval on one line: '0.52 [0.42, 0.61]'. */
export function withInterval(value, low, high, format = fmt.score) {
  const iv = fmt.interval(low, high, format);
  return h('span', {class: 'with-interval'}, format(value), iv ? h('span', {class: 'muted small'}, ' ', iv) : null);
}

/** Wait for ``pending`` (an API answer, or ``{err}``) under a spinner in a box of class ``cls``,
 *  then show what ``draw(data)`` returns, or the error; the page is ready either way. */
export async function answerInto(root, pending, cls, waiting, draw) {
  const body = h('div', {class: cls}, spinner(waiting));
  root.append(body);
  const answer = await pending;
  body.replaceChildren(...(answer.err ? [errorBox(answer.err)] : draw(answer.data)));
  ready(root);
}

/** The path of a batch's page with its runs filtered: batchHref('b1', {agent: 'echo'}). */
export function batchHref(batchId, filters = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const text = q.toString();
  return `/batches/${encodeURIComponent(batchId)}${text ? '?' + text : ''}`;
}
