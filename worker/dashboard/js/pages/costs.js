// /costs?by=&suite=&batchId=&since=&sort=&order= : what each entry spends per run and per
// success, the score it buys per dollar, and the Pareto front of cost against score
// (GET /api/costs). An unknown cost is shown as unknown, never as 0.

import {h, api, route, table, statCards, section, ready, fmt, sumValues, isNum, sortRows, setTitle} from '../core.js';
import {scatter} from '../charts.js';
import {heading, emptyState, notesList, chartBox, answerInto} from '../page.js';
import {
  sinceProblem, byProblem, filterError, filterForm, recentBatches, queryValues, scopeFields, BY_OPTIONS,
} from '../filters.js';

const KEYS = ['by', 'suite', 'batchId', 'since'];
const DEFAULT_BY = 'agent,model';

route('/costs', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Costs');
  const values = queryValues(query, KEYS);
  const by = values.by || DEFAULT_BY;
  const problem = byProblem(values.by) || sinceProblem(values.since);
  const pending = problem ? null : api('/costs', {by, suite: values.suite, batchId: values.batchId, since: values.since})
    .then((r) => r, (err) => ({err}));
  const batches = await recentBatches();
  root.append(...heading('Costs',
    'What each entry spends per run and per success, the score it buys per dollar, and the entries no other ' +
    'entry beats on both cost and score (the Pareto front). A cost the price table does not know is unknown, never 0.'));
  root.append(filterForm({
    name: 'cost filters',
    fields: [
      {name: 'by', label: 'Group by', type: 'select', options: BY_OPTIONS},
      ...scopeFields(batches),
    ],
    values: {...values, by},
    onSubmit: (v) => ctx.setQuery({...v, by: v.by === DEFAULT_BY ? '' : v.by}, {replace: false}),
    onReset: () => ctx.setQuery({by: '', suite: '', batchId: '', since: '', sort: '', order: ''}, {replace: false}),
  }));
  if (problem) {
    root.append(filterError(problem));
    ready(root);
    return;
  }
  await answerInto(root, pending, 'costs-body', 'Adding up…', (data) => render(ctx, data, values));
});

function perSuccess(r) {
  if (r.totalCostUsd === null || r.totalCostUsd === undefined) return fmt.cost(null);
  if (!r.successes) return 'no success';
  return fmt.cost(r.costPerSuccessUsd);
}

function perDollar(r) {
  if (r.costPerRunUsd === null || r.costPerRunUsd === undefined) return fmt.cost(null);
  if (r.costPerRunUsd === 0) return 'nothing spent';
  return isNum(r.scorePerDollar) ? fmt.score(r.scorePerDollar) : '—';
}

function render(ctx, data, values) {
  const out = [];
  const entries = data.entries || [];
  if (!data.runs) {
    const filtered = Boolean(values.suite || values.batchId || values.since);
    out.push(filtered
      ? emptyState('No runs match these filters.', 'bench batches   # the batch ids in the store')
      : emptyState('No runs in the store yet. Costs come from each run\'s telemetry (tokens priced by the price table):',
                   'bench py-bugs --agent anthropic --agent openai --iterations 2',
                   'bench dataset reasoning -p openai:gpt-4o-mini,anthropic:claude-haiku-4-5',
                   'bench costs --by agent,model'));
    return out;
  }
  const known = entries.filter((e) => isNum(e.costPerRunUsd));
  const totalKnown = entries.every((e) => isNum(e.totalCostUsd));
  const spent = known.reduce((a, e) => a + e.totalCostUsd, 0);
  const unknownRuns = entries.reduce((a, e) => a + (e.unknownCostRuns || 0), 0);
  const infra = entries.reduce((a, e) => a + (e.infraSpendUsd || 0), 0);
  out.push(statCards([
    {label: 'Runs counted', value: fmt.int(data.counted), hint: `of ${fmt.int(data.runs)}`},
    {label: 'Total spend', value: totalKnown ? fmt.cost(spent) : fmt.cost(null),
     hint: totalKnown ? 'agent + judge' : `known part: ${fmt.cost(spent)}`},
    {label: 'Runs without a price', value: fmt.int(unknownRuns), hint: unknownRuns ? 'their entries\' cost is unknown' : null},
    {label: 'Spent on infra errors', value: fmt.cost(infra), hint: 'not in the figures'},
    {label: 'Left out', value: fmt.int(sumValues(data.excluded)), hint: fmt.excluded(data.excluded) || 'none'},
  ]));
  const byName = Object.fromEntries(entries.map((e) => [e.entry, e]));
  const front = (data.paretoFront || []).map((name) => byName[name]).filter(Boolean);
  const points = known.filter((e) => isNum(e.meanScore)).map((e) => ({
    x: e.costPerRunUsd, y: e.meanScore, label: e.entry, highlight: Boolean(e.paretoOptimal),
  }));
  const unplotted = entries.filter((e) => !isNum(e.costPerRunUsd) || !isNum(e.meanScore));
  out.push(section('Cost against score',
    chartBox(scatter({
      title: 'Mean score against mean cost per run; the Pareto front drawn as a dashed step line, its entries as diamonds',
      points, frontier: front.map((e) => ({x: e.costPerRunUsd, y: e.meanScore})),
      xLabel: 'mean cost per run (USD)', yLabel: 'mean score',
      xFormat: (x) => fmt.cost(x), yFormat: (y) => fmt.score(y),
    })),
    h('p', {class: 'muted small'}, '◆ diamond, dashed line: on the Pareto front (no other entry is at most as costly ' +
      'and at least as good, and strictly better in one). ● circle: another entry beats it on both.'),
    unplotted.length ? h('p', {class: 'unplotted'}, 'Not plotted, cost unknown: ',
      unplotted.map((e, i) => [i ? ', ' : '', h('strong', null, e.entry),
                                ` (${fmt.int(e.unknownCostRuns)} of ${fmt.int(e.runs)} runs without a price)`])) : null));
  out.push(section('Pareto front',
    front.length
      ? h('ol', {class: 'pareto-list'}, front.map((e) => h('li', {'data-entry': e.entry},
          h('strong', null, e.entry), ` — ${fmt.cost(e.costPerRunUsd)} per run, mean score ${fmt.score(e.meanScore)}`,
          e.successes ? `, ${fmt.cost(e.costPerSuccessUsd)} per success` : ', no success')))
      : h('p', {class: 'muted'}, 'No entry has both a known cost and a score: nothing is on the front.'),
    front.length ? h('p', {class: 'muted small'}, 'Cheapest first.') : null));
  const sort = ctx.query.get('sort') || 'entry';
  const order = ctx.query.get('order') === 'desc' ? 'desc' : 'asc';
  const rows = sortRows(entries, sort, order);
  out.push(section('Entries', table({
    columns: [
      {key: 'entry', label: 'Entry', sortable: true,
       render: (r) => h('span', null, r.paretoOptimal ? h('span', {title: 'on the Pareto front'}, '◆ ') : null, r.entry)},
      {key: 'runs', label: 'Runs', num: true, sortable: true, render: (r) => fmt.int(r.runs)},
      {key: 'successes', label: 'Successes', num: true, sortable: true, render: (r) => fmt.int(r.successes)},
      {key: 'meanScore', label: 'Mean score', num: true, sortable: true, render: (r) => fmt.score(r.meanScore)},
      {key: 'agentCostUsd', label: 'Agent cost', num: true, sortable: true, render: (r) => fmt.cost(r.agentCostUsd)},
      {key: 'judgeCostUsd', label: 'Judge cost', num: true, render: (r) => fmt.cost(r.judgeCostUsd)},
      {key: 'totalCostUsd', label: 'Total', num: true, sortable: true, render: (r) => fmt.cost(r.totalCostUsd)},
      {key: 'costPerRunUsd', label: 'Per run', num: true, sortable: true, render: (r) => fmt.cost(r.costPerRunUsd)},
      {key: 'costPerSuccessUsd', label: 'Per success', num: true, sortable: true, render: perSuccess},
      {key: 'scorePerDollar', label: 'Score / $', num: true, sortable: true, render: perDollar},
      {key: 'unknownCostRuns', label: 'Without price', num: true, render: (r) => fmt.int(r.unknownCostRuns)},
      {key: 'infraSpendUsd', label: 'Infra spend', num: true, render: (r) => fmt.cost(r.infraSpendUsd)},
      {key: 'paretoOptimal', label: 'Pareto',
       render: (r) => (r.paretoOptimal ? '◆ front' : isNum(r.costPerRunUsd) ? 'beaten' : 'unknown cost')},
    ],
    rows, sort, order, rowKey: (r) => r.entry,
    onSort: (key, next) => ctx.setQuery({sort: key === 'entry' && next === 'asc' ? '' : key, order: next}, {replace: false}),
  }), notesList(data.notes)));
  return out;
}
