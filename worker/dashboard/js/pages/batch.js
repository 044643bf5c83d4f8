// One batch: aggregates, breakdowns by scenario, agent, model and tier, and its runs with filters;
// while the batch runs, its live progress (cells planned, done, running, ETA), polled in place.
import {api, badge, errorBox, fill, fmt, h, link, ready, refresh, route, section, setTitle, spinner, statCards,
        table} from '../core.js';
import {barChart} from '../charts.js';
import {passRate, words} from './overview.js';

const RUN_STATUSES = ['completed', 'failed', 'timeout', 'budget_exceeded', 'error'];
const FILTERS = ['status', 'agent', 'scenario', 'model', 'tier'];
const DIMENSIONS = [['scenario', 'Scenario'], ['agent', 'Agent'], ['model', 'Model'], ['tier', 'Tier']];
const RUNS_PAGE = 50;
const LIVE_POLL_MS = 3000; // while the batch runs
const STALE_POLL_MS = 15000; // while no progress arrives (it may still come)
const LIVE_STATES = ['running', 'stale'];

function keyText(key) {
  return key === null || key === undefined || key === '' ? '(none)' : String(key);
}

function breakdownSection(name, label, rows) {
  if (!rows || rows.length === 0) return null;
  const chart = rows.length > 1
    ? barChart({
      title: `Pass rate by ${name}`,
      bars: rows.map((r) => ({label: keyText(r.key), value: passRate(r.successfulRuns, r.runs),
                              note: `(${r.successfulRuns}/${r.runs})`})),
      xLabel: 'pass rate', max: 1, format: (v) => `${Math.round(v * 100)}%`,
    })
    : null;
  return h('div', {class: 'breakdown', 'data-dimension': name},
    h('h3', null, `By ${name}`),
    chart,
    table({
      columns: [
        {key: 'key', label, render: (r) => keyText(r.key)},
        {key: 'runs', label: 'Runs', num: true, render: (r) => fmt.int(r.runs)},
        {key: 'passed', label: 'Passed', num: true, render: (r) => fmt.int(r.successfulRuns)},
        {key: 'rate', label: 'Pass rate', num: true, render: (r) => fmt.pct(passRate(r.successfulRuns, r.runs))},
        {key: 'avg', label: 'Mean score', num: true, render: (r) => fmt.score(r.avgScore)},
        {key: 'range', label: 'Min – max', num: true, render: (r) => `${fmt.score(r.minScore)} – ${fmt.score(r.maxScore)}`},
      ],
      rows,
    }));
}

function metadataList(batch) {
  const m = batch.metadata || {};
  const items = [
    ['Suite', words(m.suite)],
    ['Agents', words(m.agent, 8)],
    ['Models', words(m.model, 8)],
    ['Scenarios', words(m.scenario, 8)],
    ['Tiers', words(m.tier || m.tiers, 8)],
    ['Sandbox', words(m.sandbox)],
    ['Judge', words(m.judge)],
    ['Specialist', words(m.specialist)],
    ['Cells planned', m.plannedCells !== undefined ? fmt.int(m.plannedCells) : ''],
    ['Invocations', m.invocations !== undefined ? fmt.int(m.invocations) : ''],
    ['Harness', words(m.harnessVersion)],
  ].filter(([, v]) => v);
  return h('dl', {class: 'kv'}, items.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

function options(values, current) {
  const list = [...new Set(values.filter((v) => v !== null && v !== undefined && v !== '').map(String))].sort();
  if (current && !list.includes(current)) list.push(current);
  return [h('option', {value: ''}, 'any'), list.map((v) => h('option', {value: v, selected: v === current}, v))];
}

function runColumns() {
  return [
    {key: 'runId', label: 'Run', render: (r) => link(`/runs/${encodeURIComponent(r.runId)}`, r.runId)},
    {key: 'status', label: 'Status', render: (r) => badge(r.status)},
    {key: 'scenario', label: 'Scenario', render: (r) => r.scenario},
    {key: 'tier', label: 'Tier'},
    {key: 'agent', label: 'Agent'},
    {key: 'model', label: 'Model'},
    {key: 'iteration', label: 'Iter.', num: true, render: (r) => (r.metadata && typeof r.metadata.iteration === 'number' ? String(r.metadata.iteration) : '—')},
    {key: 'totalScore', label: 'Score', num: true, render: (r) => fmt.score(r.totalScore)},
    {key: 'isSuccessful', label: 'Success', render: (r) => (r.isSuccessful ? '✓ yes' : '✗ no')},
    {key: 'failureClass', label: 'Failure'},
    {key: 'startedAt', label: 'Started', render: (r) => fmt.date(r.startedAt)},
  ];
}

function since(ms) {
  return typeof ms === 'number' && ms < 60_000 ? `${Math.round(ms / 1000)} s` : fmt.ms(ms);
}

function liveFigures(p) {
  const eta = p.state !== 'running' ? '—' : typeof p.etaMs === 'number' ? fmt.ms(p.etaMs) : 'after the first cell';
  return [
    ['planned', 'Cells planned', typeof p.plannedCells === 'number' ? fmt.int(p.plannedCells) : '—'],
    ['done', 'Done (stored)', fmt.int(p.done)],
    ['running', 'Running', fmt.int(p.running)],
    ['eta', 'ETA', eta],
  ];
}

function invocationsTable(invocations) {
  return table({
    caption: 'The invocations writing this batch',
    columns: [
      {key: 'invocationId', label: 'Invocation', render: (i) => h('code', null, i.invocationId)},
      {key: 'state', label: 'State', render: (i) => badge(i.state)},
      {key: 'cells', label: 'Cells', num: true, render: (i) => fmt.int(i.cells)},
      {key: 'done', label: 'Done', num: true, render: (i) => fmt.int(i.done)},
      {key: 'running', label: 'Running', num: true, render: (i) => fmt.int(i.running)},
      {key: 'updated', label: 'Last report', num: true, render: (i) => `${since(i.ageMs)} ago`},
    ],
    rows: invocations,
    rowKey: (i) => i.invocationId,
  });
}

/** The live block of a running (or stale) batch: GET /api/batches/:id/progress. */
function liveView(p) {
  const planned = typeof p.plannedCells === 'number' && p.plannedCells > 0 ? p.plannedCells : null;
  const note = p.state === 'stale'
    ? `No progress reported for ${since(p.ageMs)}: the process writing this batch was most likely stopped or `
      + `killed. The same bench command with --resume ${p.batchId} completes it.`
    : `Last report ${since(p.ageMs)} ago; this block refreshes every few seconds.`;
  return section('Progress',
    h('div', {class: 'live-progress', 'data-state': p.state, 'aria-live': 'polite'},
      h('p', {class: 'live-state'}, badge(p.state), ' ', note),
      h('progress', {class: 'live-bar', max: planned || 1, value: planned ? Math.min(p.done, planned) : 0,
                     style: {width: '100%'},
                     'aria-label': planned ? `${p.done} of ${planned} cells done` : 'cells done'}),
      h('div', {class: 'cards'}, liveFigures(p).map(([key, label, value]) =>
        h('div', {class: 'card', 'data-figure': key},
          h('div', {class: 'card-label'}, label), h('div', {class: 'card-value'}, value)))),
      p.invocations.length > 1 ? invocationsTable(p.invocations) : null,
      h('p', null, h('button', {type: 'button', class: 'link-button', onclick: () => refresh()},
                     'Show the runs stored so far'))));
}

/** Show the batch's progress in ``slot`` and poll it while the batch runs; when it has ended,
 *  render the page again (its final figures and runs), without reloading it. */
function followProgress(slot, id, first) {
  const tick = async () => {
    if (!slot.isConnected) return; // the page was left
    let p;
    try {
      ({data: p} = await api(`/batches/${encodeURIComponent(id)}/progress`));
    } catch {
      setTimeout(tick, STALE_POLL_MS); // the store did not answer: the last figures stay
      return;
    }
    if (!slot.isConnected) return;
    if (!LIVE_STATES.includes(p.state)) {
      refresh();
      return;
    }
    fill(slot, liveView(p));
    setTimeout(tick, p.state === 'running' ? LIVE_POLL_MS : STALE_POLL_MS);
  };
  if (!first || !LIVE_STATES.includes(first.state)) return;
  fill(slot, liveView(first));
  setTimeout(tick, first.state === 'running' ? LIVE_POLL_MS : STALE_POLL_MS);
}

route('/batches/:id', async (ctx) => {
  const {root, params, query} = ctx;
  const id = params.id;
  setTitle(id, 'Batch');
  root.append(h('p', {class: 'crumbs'}, link('/batches', '← Batches')), h('h1', null, 'Batch ', h('code', null, id)),
              spinner('Loading the batch…'));
  const [{data: batch}, progress] = await Promise.all([
    api(`/batches/${encodeURIComponent(id)}`, {runs: 0}),
    api(`/batches/${encodeURIComponent(id)}/progress`).then(({data}) => data, () => null),
  ]);
  const b = batch.breakdowns || {};
  const filters = {};
  for (const f of FILTERS) if (query.get(f)) filters[f] = query.get(f);
  const cursor = query.get('cursor') || '';

  const selects = FILTERS.map((f) => {
    const values = f === 'status' ? RUN_STATUSES : (b[f] || []).map((r) => r.key);
    const select = h('select', {name: f, 'aria-label': `filter by ${f}`}, options(values, filters[f] || ''));
    select.addEventListener('change', () => ctx.setQuery({[f]: select.value, cursor: null}, {replace: false}));
    return h('label', null, f, select);
  });
  const anyFilter = Object.keys(filters).length > 0;
  const runsSlot = h('div', {class: 'runs'}, spinner('Loading runs…'));
  const liveSlot = h('div', {class: 'live'});

  fill(root, 
    h('p', {class: 'crumbs'}, link('/batches', '← Batches')),
    h('h1', null, 'Batch ', h('code', null, batch.batchId)),
    h('p', {class: 'subtitle'}, `created ${fmt.date(batch.createdAt)}`,
      batch.completedAt ? `, completed ${fmt.date(batch.completedAt)}` : ', not completed', ' · ',
      link(`/compare?a=${encodeURIComponent(batch.batchId)}`, 'Compare with…'), ' · ',
      link(`/regressions?candidate=${encodeURIComponent(batch.batchId)}`, 'Regressions')),
    liveSlot,
    statCards([
      {label: 'Runs', value: fmt.int(batch.totalRuns)},
      {label: 'Successful', value: fmt.int(batch.successfulRuns)},
      {label: 'Pass rate', value: fmt.pct(passRate(batch.successfulRuns, batch.totalRuns))},
      {label: 'Mean score', value: fmt.score(batch.avgScore)},
      {label: 'Mean weighted score', value: fmt.score(batch.avgWeightedScore)},
    ]),
    section('Configuration', metadataList(batch)),
    section('Breakdowns', h('div', {class: 'grid-2'},
      DIMENSIONS.map(([name, label]) => breakdownSection(name, label, b[name])))),
    section('Runs',
      h('form', {class: 'filters', 'aria-label': 'run filters'}, selects,
        anyFilter ? h('button', {type: 'button', class: 'clear',
                                 onclick: () => ctx.setQuery(Object.fromEntries([...FILTERS, 'cursor'].map((f) => [f, null])),
                                                             {replace: false})}, 'Clear filters') : null),
      runsSlot),
  );
  followProgress(liveSlot, batch.batchId, progress);
  ready(root);

  try {
    const {data: runs, headers} = await api('/runs', {batchId: batch.batchId, ...filters, limit: RUNS_PAGE, cursor});
    const next = headers.get('x-next-cursor');
    fill(runsSlot, 
      table({columns: runColumns(), rows: runs || [], rowKey: (r) => r.runId,
             empty: anyFilter ? 'No run matches these filters.' : 'This batch holds no runs.'}),
      h('nav', {class: 'pager', 'aria-label': 'run pages'},
        cursor ? h('button', {type: 'button', class: 'first', onclick: () => ctx.setQuery({cursor: null}, {replace: false})},
                   '⇤ First page') : null,
        h('span', {class: 'pager-text'}, `${fmt.int((runs || []).length)} run${(runs || []).length === 1 ? '' : 's'} shown`),
        next ? h('button', {type: 'button', class: 'next', onclick: () => ctx.setQuery({cursor: next}, {replace: false})},
                 'Next runs →') : null));
  } catch (err) {
    fill(runsSlot, errorBox(err));
  }
});
