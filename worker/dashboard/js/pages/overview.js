// Overview: totals, pass rate and mean score by day, recent batches, the latest regressions.
import {api, badge, errorBox, fill, fmt, h, link, ready, route, section, setTitle, spinner, statCards, table}
  from '../core.js';
import {lineChart} from '../charts.js';

/** A metadata value (a word or a list of words) as text. */
export function words(value, max = 4) {
  if (value === null || value === undefined || value === '') return '';
  const list = Array.isArray(value) ? value.filter((v) => v !== null && v !== '') : [value];
  const shown = list.slice(0, max).map(String).join(', ');
  return list.length > max ? `${shown} +${list.length - max}` : shown;
}

export function passRate(successful, total) {
  return total ? successful / total : null;
}

/** Whether a batch holds dataset requests (`bench dataset`) rather than scenario runs. */
export function isDataset(b) {
  return b.kind === 'dataset' || (b.metadata || {}).kind === 'dataset';
}

function datasetName(meta) {
  const d = meta.dataset;
  if (d && typeof d === 'object') return d.ref || d.name || '';
  return words(d);
}

/** The scenario / dataset switch of a page: links that keep the rest of the query
 * (``fallback``: the kind the page shows when the URL names none). */
export function kindSwitch(ctx, kind, counts, fallback = 'scenario') {
  const label = {scenario: 'Scenario runs', dataset: 'Dataset requests', all: 'Both'};
  return h('nav', {class: 'kind-switch', 'aria-label': 'Kind of run'},
    ['scenario', 'dataset', 'all'].map((k) => {
      const n = counts && k !== 'all' ? ` (${fmt.int(counts[k] || 0)})` : '';
      return k === kind
        ? h('strong', {'aria-current': 'true'}, label[k] + n)
        : h('a', {href: '#', onclick: (e) => { e.preventDefault(); ctx.setQuery({kind: k === fallback ? null : k, page: null}, {replace: false}); }},
            label[k] + n);
    }).flatMap((el, i) => (i ? [' · ', el] : [el])));
}

/** Columns of a batch list (overview and batches pages). */
export function batchColumns({sortable = false} = {}) {
  return [
    {key: 'batchId', label: 'Batch', sortable, render: (b) => link(`/batches/${encodeURIComponent(b.batchId)}`, b.batchId)},
    {key: 'createdAt', label: 'Created', sortable, render: (b) => h('span', {title: fmt.date(b.createdAt)}, fmt.ago(b.createdAt))},
    {key: 'kind', label: 'Kind', render: (b) => b.kind || '—'},
    {key: 'agents', label: 'Agents / models', render: (b) => (isDataset(b) ? words((b.metadata || {}).targets, 2)
                                                                            : words((b.metadata || {}).agent))},
    {key: 'scenarios', label: 'Scenarios / dataset', render: (b) => (isDataset(b) ? datasetName(b.metadata || {})
                                                                                 : words((b.metadata || {}).scenario, 2))},
    {key: 'runs', label: 'Runs', num: true, sortable, render: (b) => fmt.int(b.totalRuns)},
    {key: 'passRate', label: 'Pass rate', num: true, sortable,
     render: (b) => `${fmt.pct(passRate(b.successfulRuns, b.totalRuns))} (${fmt.int(b.successfulRuns)})`},
    {key: 'avgScore', label: 'Mean score', num: true, sortable, render: (b) => fmt.score(b.avgScore)},
  ];
}

function regressionsBlock(data) {
  if (!data || !data.baseline) {
    const note = data && data.note ? ` (${data.note})` : '';
    return h('p', {class: 'muted'}, `Nothing to compare yet: the latest batch has no earlier batch of the same agent${note}.`);
  }
  const rows = data.scenarios || data.regressions || [];
  const head = h('p', null, 'Latest batch ', link(`/batches/${encodeURIComponent(data.candidate)}`, data.candidate),
                 ' against ', link(`/batches/${encodeURIComponent(data.baseline)}`, data.baseline),
                 data.agent ? ` (agent ${data.agent})` : '', '. ',
                 link(`/regressions?baseline=${encodeURIComponent(data.baseline)}&candidate=${encodeURIComponent(data.candidate)}`,
                      'All scenarios'));
  const counts = data.counts || {};
  const summary = Object.keys(counts).length
    ? h('p', {class: 'counts'}, Object.entries(counts).filter(([, n]) => n).map(([status, n]) => [badge(status), ` ${n} `]))
    : null;
  if (rows.length === 0) {
    return h('div', null, head, summary, h('p', {class: 'no-regressions'}, '✓ No scenario regressed.'));
  }
  return h('div', null, head, summary, table({
    columns: [
      {key: 'scenario', label: 'Scenario'},
      {key: 'tier', label: 'Tier'},
      {key: 'status', label: 'Status', render: (r) => badge(r.status)},
      {key: 'baselineMean', label: 'Baseline', num: true, render: (r) => fmt.score(r.baselineMean)},
      {key: 'candidateMean', label: 'Candidate', num: true, render: (r) => fmt.score(r.candidateMean)},
      {key: 'difference', label: 'Change', num: true, render: (r) => fmt.score(r.difference)},
      {key: 'severity', label: 'Severity', render: (r) => r.severity || '—'},
    ],
    rows,
    empty: 'No scenario regressed.',
  }));
}

route('/', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Overview');
  const kind = ['dataset', 'all'].includes(query.get('kind')) ? query.get('kind') : 'scenario';
  root.append(h('h1', null, 'Overview'), spinner('Loading the totals…'));
  const {data} = await api('/overview', {days: 30, kind});
  const t = data.totals || {};
  const timeline = data.timeline || [];
  const hasScores = timeline.some((d) => typeof d.avgScore === 'number');
  const scoreMax = Math.max(1, ...timeline.map((d) => (typeof d.avgScore === 'number' ? d.avgScore : 0)));
  const noun = kind === 'dataset' ? 'Requests' : 'Runs';
  fill(root, 
    h('h1', null, 'Overview'),
    kindSwitch(ctx, kind, data.runsByKind),
    statCards([
      {label: noun, value: fmt.int(t.totalRuns)},
      {label: 'Pass rate', value: fmt.pct(passRate(t.successfulRuns, t.totalRuns)),
       hint: `${fmt.int(t.successfulRuns)} successful`},
      {label: 'Mean score', value: fmt.score(t.avgScore), hint: `weighted ${fmt.score(t.avgWeightedScore)}`},
      {label: 'Batches', value: fmt.int(t.totalBatches)},
    ]),
    section(`Last ${data.days || 30} days`,
      timeline.length
        ? lineChart({
          title: 'Pass rate and mean score by day',
          series: [
            {name: 'pass rate', points: timeline.filter((d) => typeof d.passRate === 'number').map((d) => ({x: d.day, y: d.passRate}))},
            hasScores ? {name: 'mean score', points: timeline.filter((d) => typeof d.avgScore === 'number').map((d) => ({x: d.day, y: d.avgScore}))} : null,
          ].filter(Boolean),
          xLabel: 'day (UTC)', yLabel: scoreMax > 1 ? 'rate / score' : 'rate, score (0 to 1)',
          yMin: 0, yMax: scoreMax,
          yFormat: (v) => (scoreMax > 1 ? String(v) : `${Math.round(v * 100)}%`),
        })
        : h('p', {class: 'muted'}, 'No runs in this period.'),
      timeline.length
        ? h('details', {class: 'chart-data'}, h('summary', null, 'The figures by day'), table({
          columns: [
            {key: 'day', label: 'Day'},
            {key: 'runs', label: 'Runs', num: true, render: (d) => fmt.int(d.runs)},
            {key: 'passRate', label: 'Pass rate', num: true, render: (d) => fmt.pct(d.passRate)},
            {key: 'avgScore', label: 'Mean score', num: true, render: (d) => fmt.score(d.avgScore)},
          ],
          rows: [...timeline].reverse(),
        }))
        : null),
    section('Recent batches',
      table({columns: batchColumns(), rows: data.recentBatches || [], rowKey: (b) => b.batchId,
             empty: 'No batches yet: run `bench SUITE --agent oracle` to store one.'}),
      h('p', null, link('/batches', 'All batches →'))),
  );
  const slot = h('div', {class: 'regressions-slot'}, spinner('Looking for regressions…'));
  root.append(section('Recent regressions', slot));
  ready(root);
  try {
    const {data: reg} = await api('/overview/regressions');
    fill(slot, regressionsBlock(reg));
  } catch (err) {
    fill(slot, errorBox(err));
  }
});
