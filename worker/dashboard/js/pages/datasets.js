// /datasets?batchId=&dataset= : prompt dataset runs per provider and model: pass rate with its
// Wilson interval, latency percentiles (p50, p95, p99), errors and cost (GET /api/datasets).

import {
  h, api, route, link, table, section, errorBox, ready, fmt, isNum, sortRows, setTitle,
} from '../core.js';
import {barChart} from '../charts.js';
import {heading, emptyState, chartBox, batchHref} from '../page.js';
import {filterForm, recentBatches, queryValues} from '../filters.js';

route('/datasets', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Datasets');
  const values = queryValues(query, ['batchId', 'dataset']);
  const pending = api('/datasets', {batchId: values.batchId, dataset: values.dataset}).then((r) => r, (err) => ({err}));
  const batches = (await recentBatches()).filter((b) => ['dataset', 'fleet'].includes((b.metadata || {}).kind));
  const answer = await pending;
  root.append(...heading('Datasets',
    'Prompt dataset runs (bench dataset, and the dataset cells of fleets) per provider and model: pass rate with ' +
    'its 95% interval, latency percentiles and cost.'));
  const names = answer.data && Array.isArray(answer.data.datasets) ? answer.data.datasets : [];
  root.append(filterForm({
    name: 'dataset filters',
    fields: [
      {name: 'dataset', label: 'Dataset', type: 'select',
       options: [{value: '', label: 'every dataset'}, ...names.map((n) => ({value: n, label: n}))]},
      {name: 'batchId', label: 'Run (batch)', placeholder: 'every run', width: '18em',
       suggestions: batches.map((b) => b.batchId)},
    ],
    values,
    onSubmit: (v) => ctx.setQuery({...v, sort: '', order: ''}, {replace: false}),
    onReset: () => ctx.setQuery({batchId: '', dataset: '', sort: '', order: ''}, {replace: false}),
  }));
  if (answer.err) {
    root.append(errorBox(answer.err));
    ready(root);
    return;
  }
  root.append(...render(ctx, answer.data, values, batches));
  ready(root);
});

function render(ctx, data, values, batches) {
  const out = [];
  const groups = data.groups || [];
  if (!groups.length) {
    if (values.batchId || values.dataset) {
      out.push(emptyState('No dataset runs match these filters. A batch id here is the id `bench dataset` ' +
                          'printed at the end ("stored as batch ..."), or a fleet run id.'));
    } else {
      out.push(emptyState('No dataset runs in the store yet. Run a dataset against one or more models:',
                          'bench datasets                       # the built-in datasets',
                          'bench dataset reasoning -p openai:gpt-4o-mini,anthropic:claude-haiku-4-5',
                          'bench dataset reasoning -p local:smollm2 --limit 3   # no API key'));
    }
    return out;
  }
  if (values.batchId) {
    const meta = (batches.find((b) => b.batchId === values.batchId) || {}).metadata || {};
    out.push(h('p', null, 'Run ', link(batchHref(values.batchId), values.batchId),
               meta.kind === 'fleet' ? ' (a fleet run: ' : null,
               meta.kind === 'fleet' ? link(`/fleets/${encodeURIComponent(values.batchId)}`, 'its matrix') : null,
               meta.kind === 'fleet' ? ')' : null));
  } else {
    const recent = batches.filter((b) => (b.metadata || {}).kind === 'dataset').slice(0, 6);
    if (recent.length) {
      out.push(h('p', {class: 'recent-runs'}, 'Latest runs: ', recent.map((b, i) => [i ? ' · ' : '',
        link(`/datasets?${new URLSearchParams({batchId: b.batchId})}`,
             `${(b.metadata.dataset || {}).name || b.batchId} ${fmt.ago(b.createdAt)}`)])));
    }
  }
  const byDataset = new Map();
  for (const g of groups) {
    if (!byDataset.has(g.dataset)) byDataset.set(g.dataset, []);
    byDataset.get(g.dataset).push(g);
  }
  const sort = ctx.query.get('sort') || '';
  const order = ctx.query.get('order') === 'desc' ? 'desc' : 'asc';
  for (const [name, rows] of byDataset) {
    const label = (g) => (g.model ? `${g.provider}:${g.model}` : g.provider);
    const sorted = sort ? sortRows(rows, sort, order, sortValue(sort)) : rows;
    const link2 = (g) => (values.batchId
      ? link(batchHref(values.batchId, {agent: g.provider, model: g.model || ''}), label(g)) : label(g));
    out.push(h('section', {class: 'section dataset', 'data-dataset': name},
      h('h2', null, name),
      h('div', {class: 'grid-2'},
        h('div', null, h('h3', null, 'Pass rate'), chartBox(barChart({
          title: `${name}: pass rate per model with its 95% Wilson interval`,
          bars: rows.map((g) => ({label: label(g), value: g.passRate, low: g.passRateLow, high: g.passRateHigh})),
          xLabel: 'pass rate; whiskers: 95% interval', format: fmt.pct, max: 1,
        }), '640px', '420px')),
        h('div', null, h('h3', null, 'Latency'), chartBox(barChart({
          title: `${name}: latency per model, the bar to p95, the whisker from p50 to p99`,
          bars: rows.filter((g) => g.latencyMs && isNum(g.latencyMs.p95)).map((g) => ({
            label: label(g), value: g.latencyMs.p95, low: g.latencyMs.p50, high: g.latencyMs.p99,
          })),
          xLabel: 'ms: bar p95, whisker p50 to p99', format: (x) => fmt.ms(x),
          // Room on the right for the value labels of the longest bars.
          max: 1.4 * Math.max(0, ...rows.map((g) => lat(g, 'p99')).filter(isNum)),
        }), '640px', '420px'))),
      table({
        columns: [
          {key: 'provider', label: 'Provider : model', sortable: true, render: link2},
          {key: 'passRate', label: 'Pass rate [95%]', num: true, sortable: true,
           render: (g) => h('span', null, fmt.pct(g.passRate),
                            h('span', {class: 'muted small'}, ` [${fmt.pct(g.passRateLow)}, ${fmt.pct(g.passRateHigh)}]`))},
          {key: 'p50', label: 'p50', num: true, sortable: true, render: (g) => fmt.ms(lat(g, 'p50'))},
          {key: 'p95', label: 'p95', num: true, sortable: true, render: (g) => fmt.ms(lat(g, 'p95'))},
          {key: 'p99', label: 'p99', num: true, sortable: true, render: (g) => fmt.ms(lat(g, 'p99'))},
          {key: 'runs', label: 'Runs', num: true, sortable: true, render: (g) => fmt.int(g.runs)},
          {key: 'passed', label: 'Passed', num: true, render: (g) => fmt.int(g.passed)},
          {key: 'failed', label: 'Failed', num: true, render: (g) => fmt.int(g.failed)},
          {key: 'errors', label: 'Errors', num: true, sortable: true, render: (g) => fmt.int(g.errors)},
          {key: 'avgScore', label: 'Mean score', num: true, sortable: true, render: (g) => fmt.score(g.avgScore)},
          {key: 'range', label: 'min – max', num: true,
           render: (g) => (isNum(lat(g, 'min')) ? `${fmt.ms(lat(g, 'min'))} – ${fmt.ms(lat(g, 'max'))}` : '')},
          {key: 'costUsd', label: 'Cost', num: true, sortable: true, render: (g) => fmt.cost(g.costUsd)},
        ],
        rows: sorted, sort: sort || null, order, rowKey: (g) => label(g),
        onSort: (key, next) => ctx.setQuery({sort: key, order: next}, {replace: false}),
      })));
  }
  out.push(h('p', {class: 'muted small'}, 'Latency is each request\'s duration; the interval of a pass rate is ' +
             'Wilson\'s at 95%. Errors (timeouts, unavailable providers) count as not passed. A cost is unknown as ' +
             'soon as one run of the group has no price.'));
  return out;
}

function lat(g, key) {
  return g.latencyMs ? g.latencyMs[key] : null;
}

function sortValue(key) {
  if (['p50', 'p95', 'p99'].includes(key)) return (g) => lat(g, key);
  if (key === 'provider') return (g) => `${g.provider}:${g.model || ''}`;
  return (g) => g[key];
}
