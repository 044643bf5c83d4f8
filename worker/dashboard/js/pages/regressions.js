// /regressions?baseline=&candidate= or ?agent=&suite=&since= : per scenario-tier and entry, the
// candidate against the baseline and its history, with the noise band, the test, the status
// (regressed, improved, flaky...) and the severity (GET /api/regressions). Without a choice
// of batches or agent only the form is shown: the API is never asked without them.

import {
  h, api, route, link, table, statCards, section, ready, fmt, badge, isNum, sortRows, setTitle, sumValues,
} from '../core.js';
import {barChart} from '../charts.js';
import {heading, emptyState, batchHref, chartBox, answerInto} from '../page.js';
import {sinceProblem, filterError, filterForm, recentBatches, queryValues} from '../filters.js';

const STATUS_ORDER = ['regressed', 'improved', 'flaky', 'inconclusive', 'new', 'missing', 'unchanged'];
const SEVERITY_ORDER = ['major', 'moderate', 'minor'];
const MAX_CHART_ROWS = 30;

route('/regressions', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Regressions');
  const values = queryValues(query, ['baseline', 'candidate', 'agent', 'suite', 'since', 'status']);
  const byBatches = Boolean(values.baseline || values.candidate);
  const problem = byBatches && !(values.baseline && values.candidate)
    ? 'choose both a baseline and a candidate batch'
    : sinceProblem(values.since);
  const asks = !problem && (byBatches || values.agent);
  const params = byBatches
    ? {baseline: values.baseline, candidate: values.candidate, suite: values.suite, since: values.since}
    : {agent: values.agent, suite: values.suite, since: values.since};
  const pending = asks ? api('/regressions', params).then((r) => r, (err) => ({err})) : null;
  const [batches, agents] = await Promise.all([recentBatches(), agentNames()]);

  root.append(...heading('Regressions',
    'The scenarios a candidate batch got worse or better at than its baseline: the difference against a ' +
    'noise band from the baseline\'s spread and history, tested and corrected across scenarios.'));
  root.append(forms(ctx, values, batches, agents));
  if (problem) {
    root.append(filterError(problem));
    ready(root);
    return;
  }
  if (!asks) {
    if (!batches.length) {
      root.append(emptyState('No batches in the store yet. Run a suite twice, then compare the two batches:',
                             'bench py-bugs --agent oracle --agent echo --iterations 2 --batch-id demo-1',
                             'bench py-bugs --agent oracle --iterations 2 --batch-id demo-2',
                             'bench regressions --baseline demo-1 --candidate demo-2'));
    } else {
      root.append(h('section', {class: 'section empty-state', 'data-empty': 'true'},
        h('p', null, 'Choose a baseline and a candidate batch, or an agent (its two latest batches are compared).'),
        suggestion(batches)));
    }
    ready(root);
    return;
  }
  await answerInto(root, pending, 'regressions-body', 'Comparing…', (data) => render(ctx, data, values));
});

/** Who ran a batch, from its metadata: agents of a suite run, targets of a dataset run,
 *  providers of a fleet. */
function ranBy(batch) {
  const meta = batch.metadata || {};
  const out = new Set();
  for (const key of ['agent', 'targets', 'providers']) {
    const v = meta[key];
    for (const x of Array.isArray(v) ? v : v ? [v] : []) out.add(`${meta.kind || 'suite'}:${x}`);
  }
  return out;
}

/** A link to compare the newest batch that shares who ran it with an older one. */
function suggestion(batches) {
  for (let i = 0; i < batches.length; i++) {
    const mine = ranBy(batches[i]);
    if (!mine.size) continue;
    for (let j = i + 1; j < batches.length; j++) {
      if ([...ranBy(batches[j])].some((x) => mine.has(x))) {
        const q = new URLSearchParams({baseline: batches[j].batchId, candidate: batches[i].batchId});
        return h('p', null, 'For example: ', link(`/regressions?${q}`, `${batches[j].batchId} → ${batches[i].batchId}`));
      }
    }
  }
  return null;
}

/** "oracle (3 recent batches)": an agent needs two batches to be compared. */
function agentLabel(agent, batches) {
  const n = batches.filter((b) => [...ranBy(b)].some((x) => x.slice(x.indexOf(':') + 1).split(':')[0] === agent)).length;
  return n ? `${agent} (${n} recent batch${n === 1 ? '' : 'es'})` : agent;
}

async function agentNames() {
  try {
    const {data} = await api('/stats/agents');
    return Array.isArray(data) ? data.map((a) => a.agent).filter(Boolean) : [];
  } catch {
    return [];
  }
}

function forms(ctx, values, batches, agents) {
  const ids = batches.map((b) => b.batchId);
  const clear = {baseline: '', candidate: '', agent: '', status: '', sort: '', order: ''};
  const pair = filterForm({
    name: 'two batches',
    fields: [
      {name: 'baseline', label: 'Baseline batch', placeholder: 'batch id', width: '16em', suggestions: ids},
      {name: 'candidate', label: 'Candidate batch', placeholder: 'batch id', width: '16em', suggestions: ids},
      {name: 'suite', label: 'Suite', placeholder: 'any', width: '9em'},
    ],
    values,
    submitLabel: 'Compare batches',
    onSubmit: (v) => ctx.setQuery({...clear, ...v}, {replace: false}),
  });
  const agent = filterForm({
    name: 'latest batches of an agent',
    fields: [
      {name: 'agent', label: 'Agent', type: 'select',
       options: [{value: '', label: 'choose…'}, ...agents.map((a) => ({value: a, label: agentLabel(a, batches)}))]},
      {name: 'suite', label: 'Suite', placeholder: 'any', width: '9em'},
      {name: 'since', label: 'History since', placeholder: '30d, 12h or a date', width: '10em',
       suggestions: ['7d', '30d', '90d']},
    ],
    values,
    submitLabel: 'Latest two batches',
    onSubmit: (v) => ctx.setQuery({...clear, ...v}, {replace: false}),
  });
  return h('div', {class: 'grid-2 regression-forms'},
           h('div', null, h('h2', null, 'Two batches'), pair),
           h('div', null, h('h2', null, 'An agent\'s two latest batches'), agent));
}

function render(ctx, data, values) {
  const out = [];
  const rows = data.scenarios || [];
  const counts = data.counts || {};
  out.push(h('p', {class: 'comparing'}, 'Baseline ', link(batchHref(data.baseline), data.baseline),
             ' → candidate ', link(batchHref(data.candidate), data.candidate),
             values.agent ? h('span', {class: 'muted'}, ` (the two latest batches of ${values.agent})`) : null,
             ' · ', link(`/compare?${new URLSearchParams({a: data.baseline, b: data.candidate})}`, 'head to head')));
  out.push(statCards([
    {label: 'Regressed', value: h('span', null, badge('regressed'), ' ', fmt.int(counts.regressed || 0)),
     hint: data.worst ? `worst: ${data.worst}` : 'none'},
    {label: 'Improved', value: h('span', null, badge('improved'), ' ', fmt.int(counts.improved || 0))},
    {label: 'Flaky', value: h('span', null, badge('flaky'), ' ', fmt.int(counts.flaky || 0)),
     hint: 'passed and failed at one configuration'},
    {label: 'Inconclusive', value: fmt.int(counts.inconclusive || 0)},
    {label: 'Unchanged', value: fmt.int(counts.unchanged || 0)},
    {label: 'New / missing', value: `${fmt.int(counts.new || 0)} / ${fmt.int(counts.missing || 0)}`},
  ]));
  const excluded = data.excluded || {};
  const left = [['baseline', excluded.baseline], ['candidate', excluded.candidate]]
    .filter(([, e]) => sumValues(e)).map(([side, e]) => `${side}: ${fmt.excluded(e)}`);
  if (left.length) out.push(h('p', {class: 'muted small'}, `Left out (runs that do not count): ${left.join(' · ')}`));
  if (!rows.length) {
    out.push(emptyState('The two batches have no scenario in common to compare.'));
    return out;
  }
  const measured = rows.filter((r) => isNum(r.difference) && (r.difference !== 0 || (isNum(r.band) && r.band > 0)));
  const shown = sortRows(measured, 'difference', 'asc', (r) => -Math.abs(r.difference)).slice(0, MAX_CHART_ROWS);
  if (!shown.length) {
    out.push(h('p', {class: 'muted'}, 'Every scenario both batches ran scored the same on both sides, with no ' +
                                      'spread (a noise band of zero): no chart to draw.'));
  } else {
    out.push(section('Difference and noise band',
      chartBox(barChart({
        title: 'Candidate minus baseline mean score per scenario, with the noise band around zero',
        bars: shown.map((r) => ({
          label: `${shortScenario(r.scenario)} · ${r.entry}`, value: r.difference,
          low: isNum(r.band) ? -r.band : null, high: isNum(r.band) ? r.band : null,
          note: statusGlyph(r.status),
        })),
        xLabel: 'candidate − baseline mean score; whiskers: noise band ±',
        format: (x) => fmt.signed(x),
      })),
      measured.length > shown.length
        ? h('p', {class: 'muted small'}, `The ${shown.length} largest differences of ${measured.length}.`) : null,
      h('p', {class: 'muted small'}, 'A bar past its whiskers is outside the noise band; it is a regression or ' +
        'an improvement only when the test is also significant after correction (p adj < α = ' +
        `${data.alpha}).`)));
  }
  const status = STATUS_ORDER.includes(values.status) ? values.status : '';
  const filtered = status ? rows.filter((r) => r.status === status) : rows;
  const sort = ctx.query.get('sort') || '';
  const order = ctx.query.get('order') === 'desc' ? 'desc' : 'asc';
  const sorted = sort ? sortRows(filtered, sort, order, sortValue(sort)) : [...filtered].sort(byVerdict);
  const statusFilter = h('div', {class: 'toolbar status-filter'},
    h('label', null, 'Show', h('select', {
      name: 'status',
      onchange: (e) => ctx.setQuery({status: e.target.value}, {replace: false}),
    }, h('option', {value: '', selected: !status}, `every status (${rows.length})`),
    STATUS_ORDER.filter((s) => counts[s]).map((s) => h('option', {value: s, selected: s === status},
                                                          `${s} (${counts[s]})`)))));
  out.push(section('Verdicts per scenario', statusFilter, table({
    columns: [
      {key: 'status', label: 'Status', sortable: true, render: (r) => badge(r.status)},
      {key: 'severity', label: 'Severity', sortable: true, render: (r) => r.severity || ''},
      {key: 'scenario', label: 'Scenario', sortable: true},
      {key: 'tier', label: 'Tier'},
      {key: 'entry', label: 'Entry', sortable: true},
      {key: 'baselineMean', label: 'Baseline', num: true, sortable: true,
       render: (r) => meanWithRuns(r.baselineMean, r.baselineRuns)},
      {key: 'candidateMean', label: 'Candidate', num: true, sortable: true,
       render: (r) => meanWithRuns(r.candidateMean, r.candidateRuns)},
      {key: 'difference', label: 'Difference', num: true, sortable: true, render: (r) => fmt.signed(r.difference)},
      {key: 'band', label: 'Noise band', num: true, render: (r) => (isNum(r.band) ? `±${fmt.score(r.band)}` : '')},
      {key: 'pAdjusted', label: 'p adj', num: true, sortable: true, render: (r) => pText(r.pAdjusted)},
      {key: 'effectSize', label: 'Effect g', num: true, render: (r) => (isNum(r.effectSize) ? fmt.score(r.effectSize) : '')},
      {key: 'historyRuns', label: 'History', num: true, render: (r) => fmt.int(r.historyRuns)},
      {key: 'note', label: 'Note', render: (r) => (r.note ? h('span', {class: 'muted small wrap'}, r.note) : '')},
    ],
    rows: sorted, sort: sort || null, order,
    rowKey: (r) => `${r.scenario}|${r.tier}|${r.entry}`,
    empty: 'No scenario has this status.',
    onSort: (key, next) => ctx.setQuery({sort: key, order: next}, {replace: false}),
  }), h('p', {class: 'muted small'},
    'regressed / improved: outside the noise band and significant; flaky: passed and failed at one ' +
    'configuration; inconclusive: outside the band but not significant, or too few runs; unchanged: inside ' +
    'the band; new / missing: run on one side only. Severity from Hedges\' g: minor < 0.5 ≤ moderate < 0.8 ≤ major.')));
  return out;
}

function shortScenario(name) {
  const text = String(name || '');
  const slash = text.indexOf('/');
  return slash >= 0 ? text.slice(slash + 1) : text;
}

function statusGlyph(status) {
  return {regressed: '▼ regressed', improved: '▲ improved', flaky: '~ flaky', inconclusive: '? inconclusive',
          unchanged: '= unchanged'}[status] || status;
}

function meanWithRuns(mean, runs) {
  return h('span', null, fmt.score(mean), h('span', {class: 'muted small'}, ` (n=${fmt.int(runs)})`));
}

function pText(p) {
  if (!isNum(p)) return '';
  return p < 0.0001 ? '< 0.0001' : String(Number(p.toFixed(4)));
}

function sortValue(key) {
  if (key === 'status') return (r) => STATUS_ORDER.indexOf(r.status);
  if (key === 'severity') return (r) => (r.severity ? SEVERITY_ORDER.indexOf(r.severity) : null);
  return (r) => r[key];
}

function byVerdict(a, b) {
  const s = STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status);
  if (s) return s;
  const sev = (r) => (r.severity ? SEVERITY_ORDER.indexOf(r.severity) : 9);
  if (sev(a) !== sev(b)) return sev(a) - sev(b);
  return String(a.scenario).localeCompare(String(b.scenario)) || String(a.entry).localeCompare(String(b.entry));
}
