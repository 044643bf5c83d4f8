// /leaderboard?by=&suite=&batchId=&since=&sort=&order= : entries ranked on comparable runs,
// mean score with its 95% interval, rank ranges (GET /api/leaderboard).

import {
  h, api, route, link, table, statCards, section, ready, fmt, sumValues, isNum, sortRows, setTitle,
} from '../core.js';
import {barChart} from '../charts.js';
import {heading, emptyState, notesList, withInterval, chartBox, answerInto} from '../page.js';
import {
  sinceProblem, byProblem, filterError, filterForm, recentBatches, queryValues, scopeFields, BY_OPTIONS,
} from '../filters.js';

const KEYS = ['by', 'kind', 'suite', 'batchId', 'since'];
const KIND_OPTIONS = [{value: 'scenario', label: 'scenario runs'}, {value: 'dataset', label: 'dataset requests'}];
const SORTS = {
  rank: (r) => r.rankBest * 1000 + r.rankWorst,
  entry: (r) => r.entry,
  runs: (r) => r.runs,
  meanScore: (r) => r.meanScore,
  successRate: (r) => r.successRate,
  costPerSuccessUsd: (r) => r.costPerSuccessUsd,
  medianDurationS: (r) => r.medianDurationS,
  reliability: (r) => r.reliability,
  composite: (r) => r.composite,
};

route('/leaderboard', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Leaderboard');
  const values = queryValues(query, KEYS);
  const by = values.by || 'agent';
  const kind = values.kind === 'dataset' ? 'dataset' : 'scenario';
  const problem = byProblem(values.by) || sinceProblem(values.since);
  // Both requests at once; the leaderboard is not asked for with a filter the API would refuse.
  const pending = problem ? null : api('/leaderboard', {by, kind, suite: values.suite, batchId: values.batchId,
                                                         since: values.since}).then((r) => r, (err) => ({err}));
  const batches = await recentBatches();
  root.append(...heading('Leaderboard',
    'Agents, models or specialists ranked on the runs they can be compared on: the mean score with its 95% ' +
    'interval (clustered by scenario) and a rank range — "1-3" means the data cannot order those entries.'));
  root.append(filterForm({
    name: 'leaderboard filters',
    fields: [
      {name: 'by', label: 'Rank by', type: 'select', options: BY_OPTIONS},
      {name: 'kind', label: 'Runs', type: 'select', options: KIND_OPTIONS},
      ...scopeFields(batches),
    ],
    values: {...values, by, kind},
    onSubmit: (v) => ctx.setQuery({...v, by: v.by === 'agent' ? '' : v.by, kind: v.kind === 'scenario' ? '' : v.kind},
                                  {replace: false}),
    onReset: () => ctx.setQuery({by: '', kind: '', suite: '', batchId: '', since: '', sort: '', order: ''},
                                {replace: false}),
  }));
  if (problem) {
    root.append(filterError(problem));
    ready(root);
    return;
  }
  await answerInto(root, pending, 'leaderboard-body', 'Ranking…', (data) => render(ctx, data, values, batches));
});

function render(ctx, data, values, batches) {
  const out = [];
  const entries = data.entries || [];
  const filtered = Boolean(values.suite || values.batchId || values.since);
  if (!data.runs) {
    out.push(filtered
      ? emptyState('No runs match these filters.', 'bench batches   # the batch ids in the store')
      : emptyState('No runs in the store yet. Run two agents on a suite, then rank them:',
                   'bench py-bugs --agent oracle --agent echo --iterations 2',
                   'bench leaderboard --by agent'));
    return out;
  }
  out.push(statCards([
    {label: 'Runs', value: fmt.int(data.runs)},
    {label: 'Counted', value: fmt.int(data.counted), hint: 'comparable runs that count'},
    {label: 'Left out', value: fmt.int(sumValues(data.excluded)), hint: fmt.excluded(data.excluded) || 'none'},
    {label: 'Common scenario-tiers', value: isNum(data.commonScenarioTiers) ? fmt.int(data.commonScenarioTiers) : '—',
     hint: 'run by every entry'},
  ]));
  if (!entries.length) {
    const narrow = batches.slice(0, 8).map((b) => {
      const q = new URLSearchParams({...(values.by ? {by: values.by} : {}), batchId: b.batchId});
      return h('li', null, link(`/leaderboard?${q}`, b.batchId),
               h('span', {class: 'muted small'}, ` · ${fmt.int(b.totalRuns)} runs · ${fmt.ago(b.createdAt)}`));
    });
    out.push(section('Nothing to rank',
      notesList(data.notes),
      h('p', null, 'Entries are ranked only on the scenario-tiers every entry ran. Narrow the runs to one batch ' +
                   'or suite, or run the missing cells (bench SUITE --agent A --agent B).'),
      narrow.length ? [h('p', null, 'Rank one batch:'), h('ul', {class: 'narrow-list'}, narrow)] : null));
    return out;
  }
  const scores = entries.flatMap((e) => [e.meanScore, ...(e.scoreInterval || [])]).filter(isNum);
  const max = scores.length && Math.max(...scores) <= 1 ? 1 : undefined;
  out.push(section('Mean score with 95% interval',
    chartBox(barChart({
      title: `Mean score by ${data.by.join(' and ')}, with 95% intervals and rank ranges`,
      bars: entries.map((e) => ({
        label: e.entry, value: e.meanScore,
        low: e.scoreInterval ? e.scoreInterval[0] : null, high: e.scoreInterval ? e.scoreInterval[1] : null,
        note: `rank ${e.rank}`,
      })),
      xLabel: 'mean score; whiskers: 95% interval; rank range after each bar',
      format: fmt.score, max,
    })),
    h('p', {class: 'muted small'},
      'An entry\'s best rank is 1 + the entries whose interval lies wholly above its own; its worst rank is the ' +
      'number of entries minus those wholly below. An entry with no interval (one scenario) can be anywhere.')));
  const sort = SORTS[ctx.query.get('sort')] ? ctx.query.get('sort') : 'rank';
  const order = ctx.query.get('order') === 'desc' ? 'desc' : ctx.query.get('order') === 'asc' ? 'asc'
    : (sort === 'rank' || sort === 'entry' ? 'asc' : 'desc');
  const rows = sortRows(entries, sort, order, SORTS[sort]);
  out.push(section('Entries', table({
    columns: [
      {key: 'rank', label: 'Rank', sortable: true, render: (r) => h('strong', {'data-rank': r.rank}, r.rank)},
      {key: 'entry', label: 'Entry', sortable: true},
      {key: 'runs', label: 'Runs', num: true, sortable: true,
       render: (r) => `${fmt.int(r.runs)}${r.uncommonRuns ? ` (+${fmt.int(r.uncommonRuns)} uncommon)` : ''}`},
      {key: 'scenarios', label: 'Scenarios', num: true, render: (r) => fmt.int(r.scenarios)},
      {key: 'meanScore', label: 'Mean score [95%]', num: true, sortable: true,
       render: (r) => withInterval(r.meanScore, ...(r.scoreInterval || [null, null]))},
      {key: 'successRate', label: 'Success [95%]', num: true, sortable: true,
       render: (r) => withInterval(r.successRate, ...(r.successInterval || [null, null]), fmt.pct)},
      {key: 'costPerSuccessUsd', label: 'Cost / success', num: true, sortable: true,
       render: (r) => (r.costPerSuccessUsd === null && r.successes === 0 ? 'no success' : fmt.cost(r.costPerSuccessUsd))},
      {key: 'medianDurationS', label: 'Median duration', num: true, sortable: true,
       render: (r) => (isNum(r.medianDurationS) ? fmt.ms(r.medianDurationS * 1000) : '—')},
      {key: 'meanTokens', label: 'Mean tokens', num: true, render: (r) => fmt.int(r.meanTokens)},
      {key: 'reliability', label: 'Reliability', num: true, sortable: true, render: (r) => fmt.pct(r.reliability)},
      {key: 'composite', label: 'Composite', num: true, sortable: true,
       render: (r) => h('span', {title: compositeTitle(r, data.weights)}, fmt.score(r.composite))},
    ],
    rows, sort, order, rowKey: (r) => r.entry,
    onSort: (key, next) => ctx.setQuery({sort: key === 'rank' ? '' : key, order: next}, {replace: false}),
  }), notesList(data.notes),
  h('p', {class: 'muted small'}, 'Composite (for a glance): accuracy 0.30, speed 0.20, efficiency 0.20, cost 0.15, ' +
    'reliability 0.15; a part an entry has no data for is left out and the weights rescaled.')));
  return out;
}

function compositeTitle(row, weights) {
  const parts = row.compositeParts || {};
  return Object.keys(weights || {}).map((k) => `${k} ${isNum(parts[k]) ? fmt.score(parts[k]) : 'no data'}` +
    ` × ${weights[k]}`).join(', ');
}
