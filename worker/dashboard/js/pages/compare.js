// Compare: two batches or two filters (per metric and per scenario, with verdicts), or two runs
// of one scenario (where their tool calls part ways, and both diffs side by side).
import {api, badge, errorBox, fill, fmt, h, link, ready, route, section, setTitle, spinner, statCards, table, verdictBadge}
  from '../core.js';
import {barChart} from '../charts.js';
import {diffView} from './run.js';

function signed(x, format = fmt.score) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '—';
  return (x > 0 ? '+' : '') + format(x);
}

function metricFormat(metric) {
  if (metric === 'success') return (x) => fmt.pct(x);
  if (metric === 'cost') return (x) => (typeof x === 'number' ? `$${Number(x.toPrecision(3))}` : 'unknown');
  return fmt.score;
}

function pValue(p) {
  if (typeof p !== 'number') return '—';
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

function scenarioVerdict(row) {
  if (row.winner === 'A') return 'A better';
  if (row.winner === 'B') return 'B better';
  if (row.p === null || row.p === undefined) return 'not enough runs';
  return 'no detectable difference';
}

// ------------------------------------------------------------------------------ scenario intervals
// The compare route gives each scenario's difference and Welch p, not its interval. The
// interval is computed here from the same runs (GET /api/analysis/runs with the filters the
// route echoes), paired as the route pairs them; a scenario whose recomputed pairs or
// difference do not match the route's gets no interval rather than a wrong one.

function logGamma(x) {
  const c = [676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
             12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = 0.99999999999980993;
  const t = x + 7.5;
  for (let i = 0; i < 8; i++) a += c[i] / (x + i + 1);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function betaFraction(a, b, x) {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let f = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d; f *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d; if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c; if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return f;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x, a, b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** Student's t quantile for probability p > 0.5 at df degrees of freedom (bisection on the CDF). */
export function tQuantile(p, df) {
  const upperTail = (t) => 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  let lo = 0;
  let hi = 1e4;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (upperTail(mid) > 1 - p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

function variance(xs) {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return xs.reduce((a, v) => a + (v - m) * (v - m), 0) / (xs.length - 1);
}

/** Welch's interval of mean(a) - mean(b) at `level` (as worker.analysis.stats.welch_t), or null
 *  (fewer than two values a side, or both sides constant and different). */
export function welchInterval(a, b, level) {
  if (a.length < 2 || b.length < 2) return null;
  const constant = (xs) => xs.every((v) => v === xs[0]);
  const ea = constant(a) ? 0 : variance(a) / a.length;
  const eb = constant(b) ? 0 : variance(b) / b.length;
  const se2 = ea + eb;
  const diff = a.reduce((x, y) => x + y, 0) / a.length - b.reduce((x, y) => x + y, 0) / b.length;
  if (!(se2 > 0)) {
    // Both sides constant: the same value gives a zero-width interval at 0; different values
    // give an infinite statistic, on which no interval can rest.
    const scale = Math.max(...a.map(Math.abs), ...b.map(Math.abs), 1);
    return Math.abs(diff) <= 1e-12 * scale ? [0, 0] : null;
  }
  const df = (se2 * se2) / ((ea * ea) / (a.length - 1) + (eb * eb) / (b.length - 1));
  const q = tQuantile(0.5 + level / 2, df);
  return [diff - q * Math.sqrt(se2), diff + q * Math.sqrt(se2)];
}

const EXCLUDED_CLASSES = ['infra', 'harness', 'judge'];

function counted(runs) {
  const meta = (r) => (r.metadata && typeof r.metadata === 'object' ? r.metadata : {});
  const redone = new Set(runs.map((r) => meta(r).retryOf).filter(Boolean).map(String));
  return runs.filter((r) => !redone.has(r.runId) && !meta(r).cached
    && !(r.status === 'error' && EXCLUDED_CLASSES.includes(r.failureClass)));
}

function runScore(r) {
  for (const key of ['weightedScore', 'totalScore']) {
    if (typeof r[key] === 'number' && Number.isFinite(r[key])) return r[key];
  }
  return 0;
}

function cells(runs) {
  const order = new Map();
  const out = new Map();
  const sorted = [...runs].sort((x, y) => {
    const kx = `${x.startedAt || ''}\u0000${x.runId}`;
    const ky = `${y.startedAt || ''}\u0000${y.runId}`;
    return kx < ky ? -1 : kx > ky ? 1 : 0;
  });
  for (const r of sorted) {
    const m = r.metadata || {};
    const base = [r.suite, r.scenario, m.tierLabel || r.tier || ''].map(String).join('\u0000');
    const it = Number.isInteger(m.iteration) ? String(m.iteration) : `#${order.get(base) || 0}`;
    if (!Number.isInteger(m.iteration)) order.set(base, (order.get(base) || 0) + 1);
    out.set(`${base}\u0000${it}`, r);
  }
  return out;
}

/** scenario -> [low, high] for the route's rows this pairing reproduces. */
export function scenarioIntervals(aRuns, bRuns, rows, level) {
  const a = cells(counted(aRuns));
  const b = cells(counted(bRuns));
  const groups = new Map();
  for (const [key, run] of a) {
    if (!b.has(key)) continue;
    const name = `${run.suite}/${run.scenario}`;
    if (!groups.has(name)) groups.set(name, [[], []]);
    groups.get(name)[0].push(runScore(run));
    groups.get(name)[1].push(runScore(b.get(key)));
  }
  const out = new Map();
  for (const row of rows) {
    const [xa, xb] = groups.get(row.scenario) || [[], []];
    if (xa.length !== row.pairs || typeof row.difference !== 'number') continue;
    const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
    if (Math.abs(mean(xa) - mean(xb) - row.difference) > 1e-5) continue;
    const ci = welchInterval(xa, xb, level);
    if (ci && Number.isFinite(ci[0]) && Number.isFinite(ci[1])) out.set(row.scenario, ci);
  }
  return out;
}

async function loadIntervals(result) {
  const f = result.filters || {};
  if (!f.a || !f.b || !(result.scenarios || []).length) return new Map();
  const [ra, rb] = await Promise.all([api('/analysis/runs', f.a), api('/analysis/runs', f.b)]);
  if (ra.data.truncated || rb.data.truncated) return new Map();
  return scenarioIntervals(ra.data.runs || [], rb.data.runs || [], result.scenarios, result.confidenceLevel || 0.95);
}

// ------------------------------------------------------------------------------ the form

async function pickForm(ctx) {
  const a = ctx.query.get('a') || '';
  const b = ctx.query.get('b') || '';
  let batches = [];
  try {
    batches = (await api('/batches', {limit: 50})).data || [];
  } catch {
    batches = [];
  }
  const listId = 'batch-ids';
  const datalist = h('datalist', {id: listId}, batches.map((x) => h('option', {value: x.batchId},
    `${fmt.date(x.createdAt)} · ${x.totalRuns} runs`)));
  const inputA = h('input', {name: 'a', value: a, list: listId, placeholder: 'batch id, or agent=oracle,since=30d',
                             required: true, 'aria-label': 'side A'});
  const inputB = h('input', {name: 'b', value: b, list: listId, placeholder: 'batch id, or agent=echo,since=30d',
                             required: true, 'aria-label': 'side B'});
  const form = h('form', {class: 'toolbar compare-form'},
    h('label', null, 'A', inputA), h('label', null, 'B', inputB),
    h('button', {type: 'submit', class: 'primary'}, 'Compare'), datalist);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.setQuery({a: inputA.value.trim(), b: inputB.value.trim(), runA: null, runB: null}, {replace: false});
  });
  const runA = h('input', {name: 'runA', value: ctx.query.get('runA') || '', placeholder: 'run id', required: true,
                           'aria-label': 'run A'});
  const runB = h('input', {name: 'runB', value: ctx.query.get('runB') || '', placeholder: 'run id', required: true,
                           'aria-label': 'run B'});
  const runForm = h('form', {class: 'toolbar run-compare-form'},
    h('label', null, 'Run A', runA), h('label', null, 'Run B', runB),
    h('button', {type: 'submit'}, 'Compare runs'));
  runForm.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.setQuery({runA: runA.value.trim(), runB: runB.value.trim(), a: null, b: null}, {replace: false});
  });
  return h('div', null,
    section('Two batches or two sets of runs',
      h('p', {class: 'muted'}, 'A side is a batch id, filters such as ', h('code', null, 'agent=oracle,since=30d'),
        ', or both: ', h('code', null, 'BATCH,agent=echo'), '.'), form),
    section('Two runs of one scenario', runForm));
}

// ------------------------------------------------------------------------------ two sides

function sidesTable(result) {
  return table({
    columns: [
      {key: 'side', label: 'Side', render: (s) => s.side},
      {key: 'label', label: 'Selection', render: (s) => h('code', null, s.label)},
      {key: 'runs', label: 'Runs', num: true, render: (s) => fmt.int(s.runs)},
      {key: 'counted', label: 'Counted', num: true, render: (s) => fmt.int(s.counted)},
      {key: 'excluded', label: 'Left out', render: (s) => Object.entries(s.excluded || {}).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'},
      {key: 'agents', label: 'Agents', render: (s) => (s.agents || []).join(', ')},
      {key: 'models', label: 'Models', render: (s) => (s.models || []).join(', ')},
      {key: 'batches', label: 'Batches', render: (s) => h('span', null, (s.batches || []).slice(0, 3).map((id, i) => [i ? ', ' : '',
        link(`/batches/${encodeURIComponent(id)}`, id)]), (s.batches || []).length > 3 ? ` +${s.batches.length - 3}` : '')},
    ],
    rows: (result.sides || []).map((s, i) => ({...s, side: i === 0 ? 'A' : 'B'})),
  });
}

function metricsTable(result) {
  return table({
    columns: [
      {key: 'label', label: 'Metric'},
      {key: 'pairs', label: 'Pairs', num: true, render: (m) => fmt.int(m.pairs)},
      {key: 'meanA', label: 'A', num: true, render: (m) => metricFormat(m.metric)(m.meanA)},
      {key: 'meanB', label: 'B', num: true, render: (m) => metricFormat(m.metric)(m.meanB)},
      {key: 'difference', label: 'A − B', num: true, render: (m) => signed(m.difference, metricFormat(m.metric))},
      {key: 'ci', label: `${Math.round((result.confidenceLevel || 0.95) * 100)}% interval`, num: true,
       render: (m) => (Array.isArray(m.ci) ? `[${signed(m.ci[0], metricFormat(m.metric))}, ${signed(m.ci[1], metricFormat(m.metric))}]` : '—')},
      {key: 'p', label: 'p', num: true, render: (m) => pValue(m.p)},
      {key: 'test', label: 'Test', render: (m) => (m.test ? h('span', {title: m.why || ''}, m.test) : '—')},
      {key: 'verdict', label: 'Verdict', render: (m) => verdictBadge(m.verdict)},
    ],
    rows: result.metrics || [],
    rowKey: (m) => m.metric,
  });
}

function scenarioSection(result, intervals) {
  const rows = result.scenarios || [];
  if (!rows.length) return h('p', {class: 'muted'}, 'No scenario was run by both sides.');
  const level = `${Math.round((result.confidenceLevel || 0.95) * 100)}%`;
  const values = rows.flatMap((r) => [r.difference, ...(intervals && intervals.get(r.scenario) || [])])
    .filter((v) => typeof v === 'number');
  const reach = Math.max(0.1, ...values.map((v) => Math.abs(v)));
  return h('div', null,
    barChart({
      title: `Score difference A − B by scenario${intervals && intervals.size ? `, with ${level} Welch intervals` : ''}`,
      bars: rows.map((r) => {
        const ci = intervals && intervals.get(r.scenario);
        return {label: r.scenario, value: r.difference, low: ci ? ci[0] : undefined, high: ci ? ci[1] : undefined,
                note: r.winner ? `(${r.winner} better)` : ''};
      }),
      xLabel: 'mean score difference (A − B)', format: (v) => signed(v), min: -reach, max: reach,
    }),
    table({
      columns: [
        {key: 'scenario', label: 'Scenario'},
        {key: 'pairs', label: 'Pairs', num: true, render: (r) => fmt.int(r.pairs)},
        {key: 'meanA', label: 'A', num: true, render: (r) => fmt.score(r.meanA)},
        {key: 'meanB', label: 'B', num: true, render: (r) => fmt.score(r.meanB)},
        {key: 'difference', label: 'A − B', num: true, render: (r) => signed(r.difference)},
        {key: 'ci', label: `${level} interval (Welch)`, num: true, render: (r) => {
          const ci = intervals && intervals.get(r.scenario);
          if (ci) return `[${signed(ci[0])}, ${signed(ci[1])}]`;
          return intervals ? '—' : '…';
        }},
        {key: 'p', label: 'p', num: true, render: (r) => pValue(r.p)},
        {key: 'pHolm', label: 'p (Holm)', num: true, render: (r) => pValue(r.pHolm)},
        {key: 'verdict', label: 'Verdict', render: (r) => verdictBadge(scenarioVerdict(r))},
        {key: 'note', label: 'Note', wrap: true, render: (r) => r.note || ''},
      ],
      rows,
      rowKey: (r) => r.scenario,
    }),
    intervals ? h('p', {class: 'muted small'}, `Intervals: Welch's ${level} interval of A's repeats against B's; `
                  + 'none with fewer than two repeats a side or without variation.') : null);
}

async function compareSides(ctx, a, b) {
  const {root} = ctx;
  setTitle(`${a} vs ${b}`, 'Compare');
  const slot = h('div', null, spinner('Comparing…'));
  root.append(h('h1', null, 'Compare'), slot);
  const {data: r} = await api('/compare', {a, b});
  const score = (r.metrics || []).find((m) => m.metric === 'score');
  const scenarioSlot = h('div', {class: 'scenario-slot'}, scenarioSection(r, null));
  fill(slot, 
    h('p', {class: 'subtitle'}, 'A ', h('code', null, a), ' against B ', h('code', null, b), ' · ',
      link(`/compare?a=${encodeURIComponent(b)}&b=${encodeURIComponent(a)}`, 'swap sides'), ' · ',
      link('/compare', 'new comparison')),
    h('div', {class: 'overall'}, h('span', {class: 'overall-label'}, 'Verdict on the score: '), verdictBadge(r.verdict)),
    (r.refused || []).length ? h('div', {class: 'error-box refusals'}, h('strong', null, 'Not comparable'),
                                 h('ul', null, r.refused.map((x) => h('li', null, x)))) : null,
    statCards([
      {label: 'Paired cells', value: fmt.int((r.cells || {}).paired)},
      {label: 'Only in A', value: fmt.int((r.cells || {}).onlyA)},
      {label: 'Only in B', value: fmt.int((r.cells || {}).onlyB)},
      {label: 'Score A − B', value: score ? signed(score.difference) : '—',
       hint: score && Array.isArray(score.ci) ? `interval [${signed(score.ci[0])}, ${signed(score.ci[1])}]` : null},
    ]),
    (r.notes || []).length ? h('ul', {class: 'notes'}, r.notes.map((x) => h('li', null, x))) : null,
    section('Sides', sidesTable(r)),
    section('Per metric', metricsTable(r),
      (r.configuration || {}).differingParts && r.configuration.differingParts.length
        ? h('p', {class: 'muted'}, `Configuration parts that differ: ${r.configuration.differingParts.join(', ')}`) : null),
    section('Per scenario', scenarioSlot),
  );
  ready(root);
  try {
    fill(scenarioSlot, scenarioSection(r, await loadIntervals(r)));
  } catch (err) {
    fill(scenarioSlot, scenarioSection(r, new Map()), errorBox(err));
  }
  scenarioSlot.dataset.intervals = 'loaded';
}

// ------------------------------------------------------------------------------ two runs

function callText(call) {
  const args = call.arguments === null || call.arguments === undefined ? '' :
    typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
  return `${call.name || '(unnamed)'}(${args}${call.cut ? '…' : ''})`;
}

function callList(side, divergesAt) {
  const calls = side.calls || [];
  if (!calls.length) return h('p', {class: 'muted'}, 'No tool calls.');
  return h('ol', {class: 'calls', start: '0'}, calls.map((c, i) => h('li', {
    class: i === divergesAt ? 'diverge' : (divergesAt !== null && i > divergesAt ? 'after' : 'same'),
    'data-index': String(i)},
  h('span', {class: 'call-index'}, `${i === divergesAt ? '⚑ ' : ''}#${i}`), ' ', callText(c))));
}

function runHeader(label, run) {
  if (!run) return h('h3', null, label);
  return h('div', {class: 'run-head'},
    h('h3', null, `${label}: `, link(`/runs/${encodeURIComponent(run.runId)}`, run.runId)),
    h('p', null, badge(run.status), ` ${run.agent}${run.model ? ` · ${run.model}` : ''} · score ${fmt.score(run.totalScore)}`));
}

async function compareRuns(ctx, runA, runB) {
  const {root} = ctx;
  setTitle(`${runA} vs ${runB}`, 'Compare runs');
  const slot = h('div', null, spinner('Comparing the runs…'));
  root.append(h('h1', null, 'Compare two runs'), slot);
  const [{data: d}, infoA, infoB] = await Promise.all([
    api('/compare/runs', {a: runA, b: runB}),
    api(`/runs/${encodeURIComponent(runA)}`).then((x) => x.data.run),
    api(`/runs/${encodeURIComponent(runB)}`).then((x) => x.data.run),
  ]);
  const at = typeof d.divergesAt === 'number' ? d.divergesAt : null;
  const ca = (d.a.calls || [])[at];
  const cb = (d.b.calls || [])[at];
  let sentence;
  if (at === null) {
    sentence = `The two runs made the same ${fmt.int((d.a.calls || []).length)} tool call${(d.a.calls || []).length === 1 ? '' : 's'}: no divergence.`;
  } else if (!ca || !cb) {
    const longer = ca ? 'A' : 'B';
    sentence = `The tool calls agree up to #${at - 1 < 0 ? 0 : at - 1}; at call #${at} only ${longer} goes on (${callText(ca || cb)}).`;
    if (at === 0) sentence = `At call #0 only ${longer} makes a call (${callText(ca || cb)}).`;
  } else {
    sentence = `The tool calls diverge at call #${at}: A called ${callText(ca)}, B called ${callText(cb)}.`;
  }
  const diffA = h('div', null, spinner('Loading the diff…'));
  const diffB = h('div', null, spinner('Loading the diff…'));
  fill(slot, 
    h('p', {class: 'subtitle'}, link(`/compare?runA=${encodeURIComponent(runB)}&runB=${encodeURIComponent(runA)}`, 'swap runs'),
      ' · ', link('/compare', 'new comparison')),
    d.sameScenario ? null : h('p', {class: 'note'}, `These runs are of different scenarios (${d.a.scenario} and ${d.b.scenario}): `
                                                 + 'their calls are not expected to match.'),
    section('Tool calls',
      h('p', {class: 'divergence', 'data-diverges-at': at === null ? 'none' : String(at)},
        h('strong', null, at === null ? '= ' : '⚑ '), sentence),
      h('div', {class: 'side-by-side'},
        h('div', {class: 'side side-a'}, runHeader('A', infoA), callList(d.a, at)),
        h('div', {class: 'side side-b'}, runHeader('B', infoB), callList(d.b, at)))),
    section('Diffs', h('div', {class: 'side-by-side'},
      h('div', {class: 'side side-a'}, h('h3', null, 'A'), diffA),
      h('div', {class: 'side side-b'}, h('h3', null, 'B'), diffB))),
  );
  ready(root);
  const [va, vb] = await Promise.allSettled([diffView(runA), diffView(runB)]);
  fill(diffA, va.status === 'fulfilled' ? va.value : errorBox(va.reason));
  fill(diffB, vb.status === 'fulfilled' ? vb.value : errorBox(vb.reason));
}

route('/compare', async (ctx) => {
  const {query, root} = ctx;
  const a = (query.get('a') || '').trim();
  const b = (query.get('b') || '').trim();
  const runA = (query.get('runA') || '').trim();
  const runB = (query.get('runB') || '').trim();
  if (runA && runB) return compareRuns(ctx, runA, runB);
  if (a && b) return compareSides(ctx, a, b);
  setTitle('Compare');
  root.append(h('h1', null, 'Compare'), spinner());
  const form = await pickForm(ctx);
  fill(root, h('h1', null, 'Compare'), form);
  ready(root);
});
