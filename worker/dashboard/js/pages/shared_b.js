// Pieces shared by the analysis pages (leaderboard, regressions, costs, datasets, fleets,
// stress): page headings, filter forms kept in the URL, empty states, client-side checks of
// filters, number helpers and the stress test chart. Data reaches the DOM as text only.

import {h, api, fmt, errorBox, spinner, ready} from '../core.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export function setPageTitle(...parts) {
  document.title = [...parts.filter(Boolean), 'zebench'].join(' · ');
}

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

export function notesList(notes) {
  const list = (notes || []).filter(Boolean);
  if (!list.length) return null;
  return h('ul', {class: 'notes'}, list.map((n) => h('li', null, String(n))));
}

/** "another setting of the scenario: 24; retried: 2", or null when nothing was left out. */
export function excludedText(excluded) {
  const parts = Object.entries(excluded || {}).filter(([, n]) => n).map(([why, n]) => `${why}: ${fmt.int(n)}`);
  return parts.length ? parts.join('; ') : null;
}

export function sumValues(obj) {
  return Object.values(obj || {}).reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0);
}

export function isNum(x) {
  return typeof x === 'number' && Number.isFinite(x);
}

/** '[0.42, 0.61]' from a pair, or '' */
export function intervalText(low, high, format = fmt.score) {
  return isNum(low) && isNum(high) ? `[${format(low)}, ${format(high)}]` : '';
}

/** Value and its interval on one line: '0.52 [0.42, 0.61]'. */
export function withInterval(value, low, high, format = fmt.score) {
  const iv = intervalText(low, high, format);
  return h('span', {class: 'with-interval'}, format(value), iv ? h('span', {class: 'muted small'}, ' ', iv) : null);
}

/** A signed number: '+0.120' / '−0.050'. */
export function signed(x, format = fmt.score) {
  if (!isNum(x)) return '—';
  if (x === 0) return format(0);
  return (x > 0 ? '+' : '−') + format(Math.abs(x));
}

/** The "since" filter as the API reads it: 30d, 12h, 90m or an ISO date. */
export function sinceProblem(text) {
  if (!text) return null;
  const t = String(text).trim();
  if (/^\d+\s*[dhm]$/.test(t)) return null;
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(t) && !Number.isNaN(Date.parse(t.replace(' ', 'T')))) {
    return null;
  }
  return `since=${t}: expected e.g. 30d, 12h, 90m or a date (2026-01-31)`;
}

export const BY_CHOICES = ['agent', 'model', 'specialist', 'agent,model', 'agent,specialist', 'model,specialist',
                           'agent,model,specialist'];
/** The choices of a "by" select: 'agent,model' shown as 'agent + model'. */
export const BY_OPTIONS = BY_CHOICES.map((b) => ({value: b, label: b.replace(/,/g, ' + ')}));

/** The "by" filter: agent, model, specialist or a comma-separated combination. */
export function byProblem(text) {
  if (!text) return null;
  const dims = String(text).split(',').map((d) => d.trim()).filter(Boolean);
  const bad = dims.filter((d) => !['agent', 'model', 'specialist'].includes(d));
  if (!dims.length || bad.length) return `by=${text}: dimensions are agent, model, specialist (comma-separated)`;
  return null;
}

/** A problem found before asking the API, shown like an API error. */
/** Wait for ``pending`` (an API answer, or ``{err}``) under a spinner in a box of class ``cls``,
 *  then show what ``draw(data)`` returns, or the error; the page is ready either way. */
export async function answerInto(root, pending, cls, waiting, draw) {
  const body = h('div', {class: cls}, spinner(waiting));
  root.append(body);
  const answer = await pending;
  body.replaceChildren(...(answer.err ? [errorBox(answer.err)] : draw(answer.data)));
  ready(root);
}

/** The scope fields shared by the ranking pages: suite or dataset, batch (with the recent ones
 *  offered) and since. */
export function scopeFields(batches) {
  return [
    {name: 'suite', label: 'Suite or dataset', placeholder: 'any', width: '11em'},
    {name: 'batchId', label: 'Batch', placeholder: 'any', width: '16em', suggestions: batches.map((b) => b.batchId)},
    {name: 'since', label: 'Since', placeholder: '30d, 12h or 2026-01-31', width: '13em',
     suggestions: ['24h', '7d', '30d', '90d']},
  ];
}

export function filterError(message) {
  return errorBox({status: 400, error: 'invalid filter', details: message, message});
}

let idCounter = 0;

/**
 * A filter form kept in the URL. fields: [{name, label, type: 'text'|'select'|'search',
 * options: [{value, label}] | [string], placeholder, suggestions: [string], width}].
 * onSubmit(values) receives every field's trimmed value ('' when empty).
 */
export function filterForm({fields, values, onSubmit, submitLabel = 'Apply', onReset, name}) {
  const inputs = {};
  const form = h('form', {class: 'filters', 'aria-label': name || 'filters', 'data-form': name || 'filters'});
  for (const f of fields) {
    const current = values[f.name] === undefined || values[f.name] === null ? '' : String(values[f.name]);
    let input;
    if (f.type === 'select') {
      const opts = (f.options || []).map((o) => (typeof o === 'object' ? o : {value: o, label: o}));
      if (current && !opts.some((o) => o.value === current)) opts.push({value: current, label: current});
      input = h('select', {name: f.name},
                opts.map((o) => h('option', {value: o.value, selected: o.value === current}, o.label)));
    } else {
      const listId = f.suggestions && f.suggestions.length ? `dl-${f.name}-${++idCounter}` : null;
      input = h('input', {type: f.type || 'text', name: f.name, value: current, placeholder: f.placeholder || null,
                          list: listId, autocomplete: 'off', spellcheck: 'false',
                          style: f.width ? {width: f.width} : null});
      if (listId) {
        form.append(h('datalist', {id: listId}, f.suggestions.map((s) => h('option', {value: s}))));
      }
    }
    inputs[f.name] = input;
    form.append(h('label', null, f.label, input));
  }
  form.append(h('button', {type: 'submit', class: 'primary'}, submitLabel));
  if (onReset) {
    form.append(h('button', {type: 'button', class: 'reset', onclick: onReset}, 'Clear'));
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const out = {};
    for (const [k, input] of Object.entries(inputs)) out[k] = String(input.value || '').trim();
    onSubmit(out);
  });
  return form;
}

/** Recent batch ids (newest first) for suggestions; [] when the list cannot be read. */
export async function recentBatches(limit = 100) {
  try {
    const {data} = await api('/batches', {limit});
    return Array.isArray(data) ? data : [];
  } catch {
    return [];
  }
}

/** The query as a plain object of the given keys ('' for absent ones). */
export function queryValues(query, keys) {
  const out = {};
  for (const k of keys) out[k] = query.get(k) || '';
  return out;
}

/** Sort rows by a column's value; null and undefined always last. */
export function sortRows(rows, key, order, valueOf = (r) => r[key]) {
  const dir = order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = valueOf(a);
    const y = valueOf(b);
    const xn = x === null || x === undefined;
    const yn = y === null || y === undefined;
    if (xn || yn) return xn && yn ? 0 : xn ? 1 : -1;
    if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
    return String(x).localeCompare(String(y), 'en', {numeric: true}) * dir;
  });
}

export function batchHref(batchId, filters = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const text = q.toString();
  return `/batches/${encodeURIComponent(batchId)}${text ? '?' + text : ''}`;
}

// ------------------------------------------------------------------------- stress chart

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function niceTicks(hi, count = 4) {
  if (!isNum(hi) || hi <= 0) return [0];
  const raw = hi / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((m) => hi / m <= count) || 10 * mag;
  const out = [];
  // From 0 up to the first tick at or above hi, so that the top tick bounds every value.
  for (let v = 0; out.length === 0 || out[out.length - 1] < hi - step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

function shortNum(v) {
  if (!isNum(v)) return '—';
  const a = Math.abs(v);
  if (a >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (a >= 100) return v.toFixed(0);
  return String(Number(v.toFixed(a < 10 ? 2 : 1)));
}

function shape(kind, x, y, r, cls) {
  if (kind === 'square') return svg('rect', {x: x - r, y: y - r, width: 2 * r, height: 2 * r, class: cls});
  if (kind === 'triangle') {
    return svg('path', {d: `M${x},${y - r * 1.2}L${x + r * 1.15},${y + r * 0.9}L${x - r * 1.15},${y + r * 0.9}Z`,
                        class: cls});
  }
  return svg('circle', {cx: x, cy: y, r, class: cls});
}

/**
 * Throughput (answers/s, left axis: circles, solid line) and latency p50 / p95 (ms, right
 * axis: triangles dotted, squares dashed) per step, the steps evenly spaced and named by
 * their label (c=16, spike 10-20s...). `knee` is a step index, marked by a labelled line;
 * `breaking` is a step index, marked by a cross label. Series are named in a legend drawn
 * with their own marker shapes, so colour is never the only carrier.
 */
export function stressChart({steps, knee, breaking, title}) {
  const W = 640;
  const H = 320;
  const m = {l: 56, r: 62, t: 46, b: 58};
  const list = steps || [];
  const name = title || 'throughput and latency per step';
  const root = svg('svg', {class: 'chart stress-chart', role: 'img', viewBox: `0 0 ${W} ${H}`, width: '100%',
                           preserveAspectRatio: 'xMidYMid meet', 'aria-label': name},
                   svg('title', null, name));
  if (!list.length) {
    root.append(svg('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no steps'));
    return root;
  }
  const n = list.length;
  const slot = (W - m.l - m.r) / n;
  const px = (i) => m.l + slot * (i + 0.5);
  const tput = list.map((st) => st.throughputRps);
  const p50 = list.map((st) => (st.latencyMs ? st.latencyMs.p50 : null));
  const p95 = list.map((st) => (st.latencyMs ? st.latencyMs.p95 : null));
  const yHi = Math.max(1e-9, ...tput.filter(isNum));
  const y2Hi = Math.max(1e-9, ...[...p50, ...p95].filter(isNum));
  const yTicks = niceTicks(yHi);
  const y2Ticks = niceTicks(y2Hi);
  const yTop = yTicks[yTicks.length - 1] || 1;
  const y2Top = y2Ticks[y2Ticks.length - 1] || 1;
  const py = (v) => H - m.b - (v / yTop) * (H - m.t - m.b);
  const py2 = (v) => H - m.b - (v / y2Top) * (H - m.t - m.b);
  const grid = svg('g', {class: 'grid'});
  for (const t of yTicks) {
    grid.append(svg('line', {x1: m.l, x2: W - m.r, y1: py(t), y2: py(t)}),
                svg('text', {x: m.l - 6, y: py(t) + 4, 'text-anchor': 'end', class: 'tick'}, shortNum(t)));
  }
  for (const t of y2Ticks) {
    grid.append(svg('text', {x: W - m.r + 6, y: py2(t) + 4, 'text-anchor': 'start', class: 'tick tick-y2'},
                    shortNum(t)));
  }
  const every = Math.max(1, Math.ceil(n / 12));
  list.forEach((st, i) => {
    if (i % every) return;
    const label = String(st.label || `step ${i + 1}`);
    const text = label.length > 14 ? label.slice(0, 13) + '…' : label;
    grid.append(svg('text', {x: px(i), y: H - m.b + 14, 'text-anchor': n > 6 ? 'end' : 'middle', class: 'tick',
                             transform: n > 6 ? `rotate(-30 ${px(i)} ${H - m.b + 14})` : null}, text));
  });
  grid.append(svg('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: 'axis'}),
              svg('line', {x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, class: 'axis'}),
              svg('line', {x1: W - m.r, x2: W - m.r, y1: m.t, y2: H - m.b, class: 'axis'}));
  root.append(grid);
  root.append(svg('text', {x: 14, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle', class: 'axis-label',
                           transform: `rotate(-90 14 ${(m.t + H - m.b) / 2})`}, 'answers/s'),
              svg('text', {x: W - 8, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle', class: 'axis-label',
                           transform: `rotate(-90 ${W - 8} ${(m.t + H - m.b) / 2})`}, 'latency (ms)'));
  const series = [
    {values: tput, scale: py, kind: 'circle', idx: 0, dash: null, label: 'throughput (answers/s)', fmt: shortNum},
    {values: p95, scale: py2, kind: 'square', idx: 1, dash: '6 3', label: 'p95 latency (ms)', fmt: shortNum},
    {values: p50, scale: py2, kind: 'triangle', idx: 2, dash: '2 3', label: 'p50 latency (ms)', fmt: shortNum},
  ];
  if (isNum(knee) && knee >= 0 && knee < n) {
    const x = px(knee);
    root.append(svg('g', {class: 'knee', 'data-knee-step': String(knee)},
                    svg('line', {x1: x, x2: x, y1: m.t - 4, y2: H - m.b, 'stroke-dasharray': '3 3'}),
                    svg('text', {x: Math.min(Math.max(x, m.l + 40), W - m.r - 40), y: m.t - 8, 'text-anchor': 'middle',
                                 class: 'label'}, `◆ knee: ${list[knee].label || ''}`)));
  }
  if (isNum(breaking) && breaking >= 0 && breaking < n && breaking !== knee) {
    const x = px(breaking);
    root.append(svg('g', {class: 'knee breaking', 'data-breaking-step': String(breaking)},
                    svg('line', {x1: x, x2: x, y1: m.t - 4, y2: H - m.b, 'stroke-dasharray': '1 3'}),
                    svg('text', {x: Math.min(Math.max(x, m.l + 40), W - m.r - 40), y: m.t + 8, 'text-anchor': 'middle',
                                 class: 'label'}, '✗ breaking point')));
  }
  for (const sr of series) {
    const g = svg('g', {class: `series series-${sr.idx}`, 'data-series': sr.label});
    const pts = sr.values.map((v, i) => (isNum(v) ? [px(i), sr.scale(v), v, i] : null)).filter(Boolean);
    if (pts.length > 1) {
      g.append(svg('path', {class: 'line', fill: 'none', 'stroke-dasharray': sr.dash,
                            d: pts.map(([x, y], i) => `${i ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`).join('')}));
    }
    for (const [x, y, v, i] of pts) {
      const mk = shape(sr.kind, x, y, 4, 'marker');
      mk.append(svg('title', null, `${list[i].label}: ${sr.label} ${sr.fmt(v)}`));
      g.append(mk);
    }
    root.append(g);
  }
  // Legend: each series' own marker and dash, then its name.
  let lx = m.l;
  for (const sr of series) {
    const g = svg('g', {class: `series-label series-${sr.idx}`});
    g.append(svg('line', {x1: lx, x2: lx + 22, y1: 14, y2: 14, class: 'line', 'stroke-dasharray': sr.dash,
                          'stroke-width': 2}),
             shape(sr.kind, lx + 11, 14, 4, 'marker'),
             svg('text', {x: lx + 28, y: 18, class: 'label'}, sr.label));
    root.append(g);
    lx += 28 + sr.label.length * 6.4 + 16;
  }
  return root;
}
