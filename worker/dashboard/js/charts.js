// SVG charts. Each function returns an <svg role="img"> with a <title>. Colour is never the
// only carrier: series have distinct marker shapes and dash patterns and are labelled
// directly, bars carry their value, heatmap cells carry their text.

const NS = 'http://www.w3.org/2000/svg';
const W = 640;
const SHAPES = ['circle', 'square', 'triangle', 'diamond', 'cross'];
const DASHES = [null, '6 3', '2 3', '8 3 2 3', '1 2'];
const FONT = 12;

/** An SVG element; children: strings (text nodes), nodes, arrays, null. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, String(v));
  }
  const add = (c) => {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  };
  children.forEach(add);
  return el;
}

function frame(title, height, cls, desc) {
  return s('svg', {
    class: `chart ${cls}`, role: 'img', viewBox: `0 0 ${W} ${height}`, width: '100%',
    preserveAspectRatio: 'xMidYMid meet', 'aria-label': title,
  }, s('title', null, title), desc ? s('desc', null, desc) : null);
}

function finite(x) {
  return typeof x === 'number' && Number.isFinite(x);
}

function tickStep(span, count) {
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((m) => span / m <= count) || 10 * mag;
}

/** Round tick values covering [lo, hi]. */
export function ticks(lo, hi, count = 5) {
  if (!finite(lo) || !finite(hi)) return [];
  if (hi === lo) return [lo];
  const step = tickStep(hi - lo, count);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toFixed(10)));
  }
  return out;
}

/** Round ticks from 0 up to the first at or above hi, so that the top tick bounds every value. */
function ticksFromZero(hi, count) {
  if (!finite(hi) || hi <= 0) return [0];
  const step = tickStep(hi, count);
  const out = [];
  for (let v = 0; out.length === 0 || out[out.length - 1] < hi - step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

/** A number in a few characters: 2.5M, 12k, 340, then at most ``decimals(|v|)`` decimals
 *  (three under 1, two under 100 unless told); ``millions: false`` writes millions in thousands. */
function defaultFormat(v, {decimals = (a) => (a < 1 ? 3 : 2), millions = true} = {}) {
  if (!finite(v)) return '—';
  const a = Math.abs(v);
  if (millions && a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (a >= 100) return v.toFixed(0);
  return String(Number(v.toFixed(decimals(a))));
}

/** A marker of one of five shapes centred on (x, y). */
export function marker(shape, x, y, r = 4, attrs = {}) {
  switch (shape) {
    case 'square':
      return s('rect', {x: x - r, y: y - r, width: 2 * r, height: 2 * r, ...attrs});
    case 'triangle':
      return s('path', {d: `M${x},${y - r * 1.2}L${x + r * 1.15},${y + r * 0.9}L${x - r * 1.15},${y + r * 0.9}Z`, ...attrs});
    case 'diamond':
      return s('path', {d: `M${x},${y - r * 1.3}L${x + r * 1.3},${y}L${x},${y + r * 1.3}L${x - r * 1.3},${y}Z`, ...attrs});
    case 'cross':
      return s('path', {d: `M${x - r},${y - r}L${x + r},${y + r}M${x - r},${y + r}L${x + r},${y - r}`,
                        'stroke-width': 2.5, fill: 'none', ...attrs, class: `${attrs.class || ''} cross`});
    default:
      return s('circle', {cx: x, cy: y, r, ...attrs});
  }
}

function xValue(x) {
  if (finite(x)) return x;
  if (typeof x === 'string') {
    const t = Date.parse(x);
    if (!Number.isNaN(t)) return t;
  }
  return null;
}

function dayFormat(ms) {
  const d = new Date(ms);
  return `${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}

function axisLabel(text, x, y, anchor = 'middle', rotate = false) {
  if (!text) return null;
  return s('text', {x, y, 'text-anchor': anchor, class: 'axis-label',
                    transform: rotate ? `rotate(-90 ${x} ${y})` : null}, text);
}

/** Lines over x (numbers, or dates as ISO strings / epoch ms); one marker shape per series. */
export function lineChart({series, xLabel, yLabel, yMin, yMax, xFormat, yFormat, title}) {
  const H = 280;
  const m = {l: 56, r: 110, t: 16, b: 44};
  const list = (series || []).map((sr, i) => ({
    ...sr, index: i,
    points: (sr.points || []).map((p) => ({...p, xv: xValue(p.x)})).filter((p) => p.xv !== null && finite(p.y)),
  }));
  const all = list.flatMap((sr) => sr.points);
  const name = title || `${yLabel || 'value'} by ${xLabel || 'x'}: ${list.map((sr) => sr.name).join(', ')}`;
  const svg = frame(name, H, 'line-chart');
  if (all.length === 0) {
    svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no data'));
    return svg;
  }
  const datesX = (series || []).some((sr) => (sr.points || []).some((p) => typeof p.x === 'string'));
  const fx = xFormat || (datesX ? dayFormat : defaultFormat);
  const fy = yFormat || defaultFormat;
  let x0 = Math.min(...all.map((p) => p.xv));
  let x1 = Math.max(...all.map((p) => p.xv));
  if (x0 === x1) {
    const pad = datesX ? 86_400_000 : 1;
    x0 -= pad;
    x1 += pad;
  }
  let y0 = finite(yMin) ? yMin : Math.min(0, ...all.map((p) => p.y));
  let y1 = finite(yMax) ? yMax : Math.max(...all.map((p) => p.y));
  if (y0 === y1) y1 = y0 + 1;
  const px = (x) => m.l + ((x - x0) / (x1 - x0)) * (W - m.l - m.r);
  const py = (y) => H - m.b - ((y - y0) / (y1 - y0)) * (H - m.t - m.b);
  const grid = s('g', {class: 'grid'});
  for (const t of ticks(y0, y1, 5)) {
    grid.append(s('line', {x1: m.l, x2: W - m.r, y1: py(t), y2: py(t)}),
                s('text', {x: m.l - 6, y: py(t) + 4, 'text-anchor': 'end', class: 'tick'}, fy(t)));
  }
  let xt = datesX ? dayTicks(x0, x1) : ticks(x0, x1, 6);
  for (const t of xt) {
    grid.append(s('line', {x1: px(t), x2: px(t), y1: H - m.b, y2: H - m.b + 4, class: 'tick-mark'}),
                s('text', {x: px(t), y: H - m.b + 16, 'text-anchor': 'middle', class: 'tick'}, fx(t)));
  }
  grid.append(s('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: 'axis'}),
              s('line', {x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, class: 'axis'}));
  svg.append(grid, axisLabel(xLabel, (m.l + W - m.r) / 2, H - 8), axisLabel(yLabel, 14, (m.t + H - m.b) / 2, 'middle', true));
  const labels = [];
  for (const sr of list) {
    const shape = SHAPES[sr.index % SHAPES.length];
    const g = s('g', {class: `series series-${sr.index % SHAPES.length}`, 'data-series': sr.name});
    const pts = [...sr.points].sort((a, b) => a.xv - b.xv);
    if (pts.length > 1) {
      g.append(s('path', {class: 'line', fill: 'none', 'stroke-dasharray': DASHES[sr.index % DASHES.length],
                          d: pts.map((p, i) => `${i ? 'L' : 'M'}${px(p.xv).toFixed(1)},${py(p.y).toFixed(1)}`).join('')}));
    }
    for (const p of pts) {
      const mk = marker(shape, px(p.xv), py(p.y), 4, {class: 'marker'});
      mk.append(s('title', null, `${sr.name}: ${fx(p.xv)} → ${fy(p.y)}`));
      g.append(mk);
    }
    const last = pts[pts.length - 1];
    labels.push({y: py(last.y), x: px(last.xv), text: sr.name, shape, index: sr.index});
    svg.append(g);
  }
  // Direct labels at the end of each line, nudged apart so they never overlap.
  labels.sort((a, b) => a.y - b.y);
  for (let i = 1; i < labels.length; i++) {
    if (labels[i].y - labels[i - 1].y < 14) labels[i].y = labels[i - 1].y + 14;
  }
  for (const lb of labels) {
    const g = s('g', {class: `series-label series-${lb.index % SHAPES.length}`});
    g.append(marker(lb.shape, W - m.r + 12, lb.y, 4, {class: 'marker'}),
             s('text', {x: W - m.r + 20, y: lb.y + 4, class: 'label'}, truncate(lb.text, 14)));
    svg.append(g);
  }
  return svg;
}

function dayTicks(x0, x1) {
  const day = 86_400_000;
  const days = Math.max(1, Math.round((x1 - x0) / day));
  const every = Math.max(1, Math.ceil(days / 6));
  const out = [];
  const start = Math.ceil(x0 / day) * day;
  for (let t = start; t <= x1; t += every * day) out.push(t);
  return out;
}

function truncate(text, n) {
  const str = String(text ?? '');
  return str.length > n ? str.slice(0, n - 1) + '…' : str;
}

/** ``str`` cut to ``n`` characters in its middle: the start and the end both stay readable. */
function truncateMiddle(value, n) {
  const str = String(value ?? '');
  if (str.length <= n) return str;
  const head = Math.ceil((n - 1) / 2);
  return str.slice(0, head) + '…' + str.slice(str.length - (n - 1 - head));
}

/** Horizontal bars with their value written out and optional interval whiskers (low, high);
 *  `min` and `max` widen the axis (e.g. symmetric around 0 for differences). */
export function barChart({bars, xLabel, format, max, min, title}) {
  const list = (bars || []).filter((b) => b && (finite(b.value) || finite(b.low) || finite(b.high)));
  const row = 26;
  const m = {l: 170, r: 96, t: 10, b: xLabel ? 40 : 24};
  const H = m.t + m.b + Math.max(1, list.length) * row;
  const f = format || defaultFormat;
  const svg = frame(title || `${xLabel || 'value'} by ${list.length} bars`, H, 'bar-chart');
  if (list.length === 0) {
    svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no data'));
    return svg;
  }
  const values = list.flatMap((b) => [b.value, b.low, b.high]).filter(finite);
  let lo = finite(min) ? Math.min(min, ...values) : Math.min(0, ...values);
  let hi = finite(max) ? Math.max(max, ...values) : Math.max(0, ...values);
  if (lo === hi) hi = lo + 1;
  const px = (v) => m.l + ((v - lo) / (hi - lo)) * (W - m.l - m.r);
  const grid = s('g', {class: 'grid'});
  for (const t of ticks(lo, hi, 5)) {
    grid.append(s('line', {x1: px(t), x2: px(t), y1: m.t, y2: H - m.b}),
                s('text', {x: px(t), y: H - m.b + 14, 'text-anchor': 'middle', class: 'tick'}, f(t)));
  }
  grid.append(s('line', {x1: px(0), x2: px(0), y1: m.t, y2: H - m.b, class: 'axis'}));
  svg.append(grid, axisLabel(xLabel, (m.l + W - m.r) / 2, H - 6));
  list.forEach((b, i) => {
    const y = m.t + i * row;
    const g = s('g', {class: 'bar-row', 'data-label': String(b.label)});
    g.append(s('text', {x: m.l - 8, y: y + row / 2 + 4, 'text-anchor': 'end', class: 'label'},
               truncate(b.label, 24)));
    let end = px(0);
    if (finite(b.value)) {
      const a = px(Math.min(0, b.value));
      const z = px(Math.max(0, b.value));
      g.append(s('rect', {x: a, y: y + 5, width: Math.max(1, z - a), height: row - 10,
                          class: b.value < 0 ? 'bar negative' : 'bar'}));
      end = z;
    }
    if (finite(b.low) && finite(b.high)) {
      const cy = y + row / 2;
      g.append(s('path', {class: 'whisker',
                          d: `M${px(b.low)},${cy}L${px(b.high)},${cy}M${px(b.low)},${cy - 6}L${px(b.low)},${cy + 6}` +
                             `M${px(b.high)},${cy - 6}L${px(b.high)},${cy + 6}`}));
      end = Math.max(end, px(b.high));
    }
    const text = (finite(b.value) ? f(b.value) : '') +
      (finite(b.low) && finite(b.high) ? ` [${f(b.low)}, ${f(b.high)}]` : '') + (b.note ? ` ${b.note}` : '');
    const tx = Math.min(end + 6, W - m.r + 6);
    g.append(s('text', {x: tx, y: y + row / 2 + 4, class: 'value'}, text.trim()));
    g.append(s('title', null, `${b.label}: ${text.trim()}`));
    svg.append(g);
  });
  return svg;
}

/** Points with labels; `href` points are links; `frontier` is drawn as a step line. */
export function scatter({points, xLabel, yLabel, frontier, xFormat, yFormat, title}) {
  const H = 320;
  const m = {l: 60, r: 24, t: 16, b: 44};
  const list = (points || []).filter((p) => finite(p.x) && finite(p.y));
  const fx = xFormat || defaultFormat;
  const fy = yFormat || defaultFormat;
  const svg = frame(title || `${yLabel || 'y'} against ${xLabel || 'x'}`, H, 'scatter');
  if (list.length === 0) {
    svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no data'));
    return svg;
  }
  let x0 = Math.min(0, ...list.map((p) => p.x));
  let x1 = Math.max(...list.map((p) => p.x));
  let y0 = Math.min(0, ...list.map((p) => p.y));
  let y1 = Math.max(...list.map((p) => p.y));
  if (x0 === x1) x1 = x0 + 1;
  if (y0 === y1) y1 = y0 + 1;
  x1 += (x1 - x0) * 0.05;
  y1 += (y1 - y0) * 0.05;
  const px = (x) => m.l + ((x - x0) / (x1 - x0)) * (W - m.l - m.r);
  const py = (y) => H - m.b - ((y - y0) / (y1 - y0)) * (H - m.t - m.b);
  const grid = s('g', {class: 'grid'});
  for (const t of ticks(y0, y1, 5)) {
    grid.append(s('line', {x1: m.l, x2: W - m.r, y1: py(t), y2: py(t)}),
                s('text', {x: m.l - 6, y: py(t) + 4, 'text-anchor': 'end', class: 'tick'}, fy(t)));
  }
  for (const t of ticks(x0, x1, 6)) {
    grid.append(s('line', {x1: px(t), x2: px(t), y1: m.t, y2: H - m.b}),
                s('text', {x: px(t), y: H - m.b + 16, 'text-anchor': 'middle', class: 'tick'}, fx(t)));
  }
  svg.append(grid, axisLabel(xLabel, (m.l + W - m.r) / 2, H - 8),
             axisLabel(yLabel, 14, (m.t + H - m.b) / 2, 'middle', true));
  const front = (frontier || []).filter((p) => finite(p.x) && finite(p.y)).sort((a, b) => a.x - b.x);
  if (front.length > 1) {
    let d = `M${px(front[0].x)},${py(front[0].y)}`;
    for (let i = 1; i < front.length; i++) d += `H${px(front[i].x)}V${py(front[i].y)}`;
    svg.append(s('path', {d, class: 'frontier', fill: 'none', 'stroke-dasharray': '5 3'},
                 s('title', null, 'Pareto front')));
  }
  for (const p of list) {
    const mk = marker(p.highlight ? 'diamond' : 'circle', px(p.x), py(p.y), p.highlight ? 5 : 4,
                      {class: p.highlight ? 'marker highlight' : 'marker'});
    const label = s('text', {x: px(p.x) + 7, y: py(p.y) - 6, class: 'label'}, truncate(p.label, 22));
    const tip = s('title', null, `${p.label}: ${xLabel || 'x'} ${fx(p.x)}, ${yLabel || 'y'} ${fy(p.y)}`);
    const g = p.href ? s('a', {href: p.href, class: 'point'}, mk, label, tip) : s('g', {class: 'point'}, mk, label, tip);
    svg.append(g);
  }
  return svg;
}

/** A grid of cells, each with its text written in; shade follows value (0..1 after format). */
export function heatmap({rows, cols, value, format, title}) {
  const rowList = (rows || []).map((r) => (typeof r === 'object' && r !== null ? r : {key: r, label: r}));
  const colList = (cols || []).map((c) => (typeof c === 'object' && c !== null ? c : {key: c, label: c}));
  const m = {l: 150, t: 92, r: 8, b: 8};
  const cw = Math.max(40, Math.min(110, (W - m.l - m.r) / Math.max(1, colList.length)));
  const ch = 28;
  const width = Math.max(W, m.l + colList.length * cw + m.r);
  const H = m.t + rowList.length * ch + m.b;
  const f = format || defaultFormat;
  const svg = s('svg', {class: 'chart heatmap', role: 'img', viewBox: `0 0 ${width} ${H}`, width: '100%',
                        'aria-label': title || 'heatmap'}, s('title', null, title || 'heatmap'));
  const cells = [];
  rowList.forEach((r) => colList.forEach((c) => {
    const v = value(r.key, c.key);
    if (v && finite(v.value)) cells.push(v.value);
  }));
  const lo = cells.length ? Math.min(...cells) : 0;
  const hi = cells.length ? Math.max(...cells) : 1;
  colList.forEach((c, j) => {
    const x = m.l + j * cw + cw / 2;
    // Labels that share a long prefix (provider:model) differ at their end: keep both ends.
    svg.append(s('text', {x, y: m.t - 8, class: 'label col-label', 'text-anchor': 'start',
                          transform: `rotate(-35 ${x} ${m.t - 8})`},
                 truncateMiddle(c.label, 22)));
  });
  rowList.forEach((r, i) => {
    const y = m.t + i * ch;
    svg.append(s('text', {x: m.l - 6, y: y + ch / 2 + 4, 'text-anchor': 'end', class: 'label'}, truncate(r.label, 22)));
    colList.forEach((c, j) => {
      const x = m.l + j * cw;
      const v = value(r.key, c.key);
      const g = s('g', {class: 'cell'});
      if (!v) {
        g.append(s('rect', {x, y, width: cw - 2, height: ch - 2, class: 'cell-empty'}),
                 s('text', {x: x + cw / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle', class: 'cell-text'}, '—'));
      } else {
        const t = finite(v.value) && hi > lo ? (v.value - lo) / (hi - lo) : 0.5;
        const level = Math.min(4, Math.floor(t * 5));
        g.append(s('rect', {x, y, width: cw - 2, height: ch - 2, class: `cell-fill level-${level}`}),
                 s('text', {x: x + cw / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle',
                            class: `cell-text${level >= 3 ? ' on-dark' : ''}`},
                   v.text !== undefined ? v.text : f(v.value)),
                 s('title', null, `${r.label} × ${c.label}: ${v.text !== undefined ? v.text : f(v.value)}`));
      }
      svg.append(g);
    });
  });
  return svg;
}

/** The numbers of the stress chart: two decimals under 10, one under 100, thousands as k. */
function stepFormat(v) {
  return defaultFormat(v, {decimals: (a) => (a < 10 ? 2 : 1), millions: false});
}

/**
 * Throughput (answers/s, left axis: circles, solid line) and latency p50 / p95 (ms, right
 * axis: triangles dotted, squares dashed) per step, the steps evenly spaced and named by
 * their label (c=16, spike 10-20s...). `knee` is a step index, marked by a labelled line;
 * `breaking` is a step index, marked by a cross label. Series are named in a legend drawn
 * with their own marker shapes, so colour is never the only carrier.
 */
export function stressChart({steps, knee, breaking, title}) {
  const H = 320;
  const m = {l: 56, r: 62, t: 46, b: 58};
  const list = steps || [];
  const svg = frame(title || 'throughput and latency per step', H, 'stress-chart');
  if (!list.length) {
    svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no steps'));
    return svg;
  }
  const n = list.length;
  const slot = (W - m.l - m.r) / n;
  const px = (i) => m.l + slot * (i + 0.5);
  const tput = list.map((st) => st.throughputRps);
  const p50 = list.map((st) => (st.latencyMs ? st.latencyMs.p50 : null));
  const p95 = list.map((st) => (st.latencyMs ? st.latencyMs.p95 : null));
  const yTicks = ticksFromZero(Math.max(1e-9, ...tput.filter(finite)), 4);
  const y2Ticks = ticksFromZero(Math.max(1e-9, ...[...p50, ...p95].filter(finite)), 4);
  const yTop = yTicks[yTicks.length - 1] || 1;
  const y2Top = y2Ticks[y2Ticks.length - 1] || 1;
  const py = (v) => H - m.b - (v / yTop) * (H - m.t - m.b);
  const py2 = (v) => H - m.b - (v / y2Top) * (H - m.t - m.b);
  const grid = s('g', {class: 'grid'});
  for (const t of yTicks) {
    grid.append(s('line', {x1: m.l, x2: W - m.r, y1: py(t), y2: py(t)}),
                s('text', {x: m.l - 6, y: py(t) + 4, 'text-anchor': 'end', class: 'tick'}, stepFormat(t)));
  }
  for (const t of y2Ticks) {
    grid.append(s('text', {x: W - m.r + 6, y: py2(t) + 4, 'text-anchor': 'start', class: 'tick tick-y2'},
                  stepFormat(t)));
  }
  const every = Math.max(1, Math.ceil(n / 12));
  list.forEach((st, i) => {
    if (i % every) return;
    grid.append(s('text', {x: px(i), y: H - m.b + 14, 'text-anchor': n > 6 ? 'end' : 'middle', class: 'tick',
                           transform: n > 6 ? `rotate(-30 ${px(i)} ${H - m.b + 14})` : null},
                  truncate(st.label || `step ${i + 1}`, 14)));
  });
  grid.append(s('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: 'axis'}),
              s('line', {x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, class: 'axis'}),
              s('line', {x1: W - m.r, x2: W - m.r, y1: m.t, y2: H - m.b, class: 'axis'}));
  const middle = (m.t + H - m.b) / 2;
  svg.append(grid, axisLabel('answers/s', 14, middle, 'middle', true),
             axisLabel('latency (ms)', W - 8, middle, 'middle', true));
  const series = [
    {values: tput, scale: py, shape: 'circle', index: 0, dash: DASHES[0], label: 'throughput (answers/s)'},
    {values: p95, scale: py2, shape: 'square', index: 1, dash: DASHES[1], label: 'p95 latency (ms)'},
    {values: p50, scale: py2, shape: 'triangle', index: 2, dash: DASHES[2], label: 'p50 latency (ms)'},
  ];
  const markLabelX = (x) => Math.min(Math.max(x, m.l + 40), W - m.r - 40);
  if (finite(knee) && knee >= 0 && knee < n) {
    const x = px(knee);
    svg.append(s('g', {class: 'knee', 'data-knee-step': String(knee)},
                 s('line', {x1: x, x2: x, y1: m.t - 4, y2: H - m.b, 'stroke-dasharray': '3 3'}),
                 s('text', {x: markLabelX(x), y: m.t - 8, 'text-anchor': 'middle', class: 'label'},
                   `◆ knee: ${list[knee].label || ''}`)));
  }
  if (finite(breaking) && breaking >= 0 && breaking < n && breaking !== knee) {
    const x = px(breaking);
    svg.append(s('g', {class: 'knee breaking', 'data-breaking-step': String(breaking)},
                 s('line', {x1: x, x2: x, y1: m.t - 4, y2: H - m.b, 'stroke-dasharray': '1 3'}),
                 s('text', {x: markLabelX(x), y: m.t + 8, 'text-anchor': 'middle', class: 'label'}, '✗ breaking point')));
  }
  for (const sr of series) {
    const g = s('g', {class: `series series-${sr.index}`, 'data-series': sr.label});
    const pts = sr.values.map((v, i) => (finite(v) ? [px(i), sr.scale(v), v, i] : null)).filter(Boolean);
    if (pts.length > 1) {
      g.append(s('path', {class: 'line', fill: 'none', 'stroke-dasharray': sr.dash,
                          d: pts.map(([x, y], i) => `${i ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`).join('')}));
    }
    for (const [x, y, v, i] of pts) {
      const mk = marker(sr.shape, x, y, 4, {class: 'marker'});
      mk.append(s('title', null, `${list[i].label}: ${sr.label} ${stepFormat(v)}`));
      g.append(mk);
    }
    svg.append(g);
  }
  // Legend: each series' own marker and dash, then its name.
  let lx = m.l;
  for (const sr of series) {
    svg.append(s('g', {class: `series-label series-${sr.index}`},
                 s('line', {x1: lx, x2: lx + 22, y1: 14, y2: 14, class: 'line', 'stroke-dasharray': sr.dash,
                            'stroke-width': 2}),
                 marker(sr.shape, lx + 11, 14, 4, {class: 'marker'}),
                 s('text', {x: lx + 28, y: 18, class: 'label'}, sr.label)));
    lx += 28 + sr.label.length * 6.4 + 16;
  }
  return svg;
}
