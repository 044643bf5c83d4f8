// /stress?provider=&model=&profile=&status=&cursor= : the stored load tests (GET /api/stress);
// /stress/:id : one test's throughput and latency per step with the knee and the breaking point
// marked, its figures (recovery, resilience, rate-limit onset, phases) and settings
// (GET /api/stress/:id; worker/analysis/stress.py defines every figure).

import {
  h, api, route, link, table, statCards, section, spinner, errorBox, ready, fmt, badge, isNum, setTitle,
} from '../core.js';
import {stressChart} from '../charts.js';
import {heading, emptyState, chartBox} from '../page.js';
import {filterForm, queryValues} from '../filters.js';

const PAGE_SIZE = 50;
const FILTERS = ['provider', 'model', 'profile', 'status'];
const PROFILES = ['ramp', 'sustained', 'spike', 'large-input', 'rate-limit', 'failure-recovery'];
const STATUSES = ['completed', 'budget_exceeded', 'interrupted', 'failed'];

function rps(x) {
  return isNum(x) ? `${Number(x.toFixed(x < 10 ? 2 : 1))}/s` : '—';
}

function kneeText(summary) {
  const knee = summary && summary.knee;
  if (!knee) return null;
  return `concurrency ${knee.concurrency}`;
}

route('/stress', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Stress tests');
  const values = queryValues(query, FILTERS);
  const cursor = query.get('cursor') || '';
  root.append(...heading('Stress tests',
    'Load tests of model endpoints (bench stress): throughput and latency per step, the knee, the breaking ' +
    'point, recovery and a resilience score.'));
  const body = h('div', null, spinner('Loading stress tests…'));
  const filtered = FILTERS.some((k) => values[k]);
  let items;
  let next;
  try {
    const answer = await api('/stress', {...values, limit: PAGE_SIZE, cursor});
    items = Array.isArray(answer.data) ? answer.data : [];
    next = answer.headers.get('x-next-cursor');
  } catch (err) {
    root.append(listFilters(ctx, values, []), errorBox(err));
    ready(root);
    return;
  }
  if (!items.length && !filtered && !cursor) {
    root.append(emptyState('No stress tests in the store yet. Load-test an endpoint (any OpenAI-compatible server, ' +
                           'or a hosted model with its key):',
                           'bench stress openai:MODEL --base-url http://127.0.0.1:8080/v1 --max-concurrency 32',
                           'bench stress anthropic:claude-haiku-4-5 --profile rate-limit --max-cost 0.50'));
    ready(root);
    return;
  }
  root.append(listFilters(ctx, values, items), body);
  if (!items.length) {
    body.replaceChildren(emptyState('No stress test matches these filters.'));
    ready(root);
    return;
  }
  body.replaceChildren(section(`Stress tests${cursor ? ' (older)' : ''}`, table({
    columns: [
      {key: 'id', label: 'Test', render: (t) => link(`/stress/${encodeURIComponent(t.id)}`, t.id)},
      {key: 'target', label: 'Provider : model', render: (t) => `${t.provider}:${t.model}`},
      {key: 'profile', label: 'Profile'},
      {key: 'status', label: 'Status', render: (t) => badge(t.status)},
      {key: 'startedAt', label: 'Started', render: (t) => h('span', {title: fmt.date(t.startedAt)}, fmt.ago(t.startedAt))},
      {key: 'requests', label: 'Requests', num: true, render: (t) => fmt.int((t.summary || {}).requests)},
      {key: 'errorRate', label: 'Errors', num: true, render: (t) => fmt.pct((t.summary || {}).errorRate)},
      {key: 'best', label: 'Best throughput', num: true, render: (t) => bestThroughput(t.summary || {})},
      {key: 'knee', label: 'Knee', render: (t) => kneeText(t.summary) || (t.profile === 'ramp' ? 'none' : '')},
      {key: 'breaking', label: 'Breaking point', render: (t) => breakingText((t.summary || {}).breakingPoint) || 'none'},
      {key: 'resilience', label: 'Resilience', num: true,
       render: (t) => (t.summary && t.summary.resilience ? fmt.score(t.summary.resilience.score) : '—')},
    ],
    rows: items, rowKey: (t) => t.id,
  }), h('nav', {class: 'pager', 'aria-label': 'pages'},
    cursor ? link(`/stress?${new URLSearchParams(strip({...values}))}`, '← Newest') : null,
    next ? link(`/stress?${new URLSearchParams(strip({...values, cursor: next}))}`, 'Older →') : null)));
  ready(root);
});

function strip(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v));
}

function listFilters(ctx, values, items) {
  const distinct = (key) => [...new Set(items.map((t) => t[key]).filter(Boolean))].sort();
  const options = (all) => [{value: '', label: 'any'}, ...all.map((v) => ({value: v, label: v.replace(/_/g, ' ')}))];
  return filterForm({
    name: 'stress filters',
    fields: [
      {name: 'provider', label: 'Provider', placeholder: 'any', width: '10em', suggestions: distinct('provider')},
      {name: 'model', label: 'Model', placeholder: 'any', width: '12em', suggestions: distinct('model')},
      {name: 'profile', label: 'Profile', type: 'select', options: options(PROFILES)},
      {name: 'status', label: 'Status', type: 'select', options: options(STATUSES)},
    ],
    values,
    onSubmit: (v) => ctx.setQuery({...v, cursor: ''}, {replace: false}),
    onReset: () => ctx.setQuery({provider: '', model: '', profile: '', status: '', cursor: ''}, {replace: false}),
  });
}

function bestThroughput(summary) {
  if (!isNum(summary.maxThroughputRps)) return '—';
  return `${rps(summary.maxThroughputRps)} at c=${summary.maxThroughputConcurrency}`;
}

function breakingText(bp) {
  if (!bp) return null;
  return `${bp.label || `concurrency ${bp.concurrency}`}: ${bp.reason}`;
}

function latencyText(d) {
  return d ? `${fmt.ms(d.p50)} / ${fmt.ms(d.p95)} / ${fmt.ms(d.p99)}` : '—';
}

function errorsText(errors) {
  const parts = Object.entries(errors || {}).filter(([, n]) => n).map(([k, n]) => `${k}: ${fmt.int(n)}`);
  return parts.length ? parts.join(', ') : '';
}

route('/stress/:id', async (ctx) => {
  const {root, params} = ctx;
  setTitle(params.id, 'Stress tests');
  root.append(h('p', {class: 'muted small'}, link('/stress', '← Stress tests')));
  const body = h('div', null, spinner('Loading the stress test…'));
  root.append(body);
  let test;
  try {
    ({data: test} = await api(`/stress/${encodeURIComponent(params.id)}`));
  } catch (err) {
    body.replaceChildren(h('h1', null, params.id), errorBox(err));
    ready(root);
    return;
  }
  body.replaceChildren(...renderTest(test));
  ready(root);
});

function renderTest(test) {
  const out = [];
  const summary = test.summary || {};
  const steps = test.steps || [];
  const config = test.config || {};
  out.push(h('h1', null, `${test.provider}:${test.model}`),
           h('p', {class: 'subtitle'}, h('span', {class: 'mono'}, test.id), ' · ', badge(test.status),
             ` · profile ${test.profile} · ${fmt.date(test.startedAt)}`,
             summary.stopReason ? ` · stopped: ${summary.stopReason}` : null));
  const knee = summary.knee;
  const bp = summary.breakingPoint;
  const answered = summary.requests ? summary.ok / summary.requests : null;
  out.push(statCards([
    {label: 'Requests', value: fmt.int(summary.requests), hint: `${fmt.pct(answered)} answered`},
    {label: 'Best throughput', value: rps(summary.maxThroughputRps),
     hint: isNum(summary.maxThroughputConcurrency) ? `at concurrency ${summary.maxThroughputConcurrency}` : null},
    {label: 'Knee', value: knee ? `c=${knee.concurrency}` : test.profile === 'ramp' ? 'none' : 'n/a',
     hint: knee ? `${rps(knee.throughputRps)}, p95 ${fmt.ms(knee.p95Ms)}`
       : test.profile === 'ramp' ? 'throughput kept growing, or latency did not' : 'ramp profile only'},
    {label: 'Breaking point', value: bp ? (bp.label || `c=${bp.concurrency}`) : 'none',
     hint: bp ? bp.reason : 'every step held'},
    {label: 'Latency p50 / p95 / p99', value: latencyText(summary.latencyMs)},
    {label: 'Resilience', value: summary.resilience ? fmt.score(summary.resilience.score) : '—',
     hint: summary.resilience
       ? `availability ${fmt.score(summary.resilience.availability)}, recovery ${fmt.score(summary.resilience.recovery)}, ` +
         `latency ${fmt.score(summary.resilience.latency)}` : null},
    {label: 'Cost', value: fmt.cost(summary.costUsd)},
  ]));
  const position = (stepIndex) => steps.findIndex((st) => st.index === stepIndex);
  const kneePos = knee ? position(knee.stepIndex) : -1;
  const bpPos = bp ? position(bp.stepIndex) : -1;
  out.push(section('Throughput and latency per step',
    chartBox(stressChart({
      steps, knee: kneePos >= 0 ? kneePos : null, breaking: bpPos >= 0 ? bpPos : null,
      title: `${test.provider}:${test.model}, ${test.profile}: answers per second and p50/p95 latency per step` +
             (knee ? `; knee at concurrency ${knee.concurrency}` : ''),
    }), '900px', '560px'),
    h('p', {class: 'knee-text'}, knee
      ? [h('strong', null, `Knee at concurrency ${knee.concurrency}`),
         `: going to ${knee.nextConcurrency} gained ${fmt.pct(knee.throughputGrowth)} of throughput ` +
         `(${rps(knee.throughputRps)} → ${rps(knee.nextThroughputRps)}) while p95 latency grew ` +
         `${fmt.pct(knee.p95Growth)} (${fmt.ms(knee.p95Ms)} → ${fmt.ms(knee.nextP95Ms)}). Past the knee, more ` +
         'concurrency only queues.']
      : test.profile === 'ramp'
        ? 'No knee: throughput kept growing with concurrency, or latency did not grow with it.'
        : `No knee for a ${test.profile} test: only a ramp varies the concurrency step by step.`),
    bp ? h('p', {class: 'breaking-text'}, h('strong', null, `Breaking point: ${bp.label || `concurrency ${bp.concurrency}`}`),
           ` — ${bp.reason}.`) : null,
    h('p', {class: 'muted small'}, thresholdsText(summary.thresholds))));
  out.push(section('Steps', table({
    columns: [
      {key: 'label', label: 'Step', render: (st) => h('span', null, st.label,
        st.partial ? ' (cut)' : null,
        knee && st.index === knee.stepIndex ? h('strong', {class: 'knee-mark'}, ' ◆ knee') : null,
        bp && st.index === bp.stepIndex ? h('strong', {class: 'breaking-mark'}, ' ✗ breaking') : null)},
      {key: 'phase', label: 'Phase'},
      {key: 'concurrency', label: 'Concurrency', num: true, render: (st) => fmt.int(st.concurrency)},
      {key: 'promptTokens', label: 'Prompt tokens', num: true, render: (st) => fmt.int(st.promptTokens)},
      {key: 'requests', label: 'Sent', num: true, render: (st) => fmt.int(st.requests)},
      {key: 'ok', label: 'Answered', num: true, render: (st) => fmt.int(st.ok)},
      {key: 'errorRate', label: 'Error rate', num: true, render: (st) => fmt.pct(st.errorRate)},
      {key: 'errors', label: 'Errors by class', render: (st) => errorsText(st.errors)},
      {key: 'throughputRps', label: 'Answers/s', num: true, render: (st) => rps(st.throughputRps)},
      {key: 'requestRate', label: 'Requests/s', num: true, render: (st) => rps(st.requestRate)},
      {key: 'p50', label: 'p50', num: true, render: (st) => fmt.ms((st.latencyMs || {}).p50)},
      {key: 'p95', label: 'p95', num: true, render: (st) => fmt.ms((st.latencyMs || {}).p95)},
      {key: 'p99', label: 'p99', num: true, render: (st) => fmt.ms((st.latencyMs || {}).p99)},
      {key: 'ttft', label: 'TTFT p50 / p95', num: true,
       render: (st) => (st.ttftMs ? `${fmt.ms(st.ttftMs.p50)} / ${fmt.ms(st.ttftMs.p95)}` : '')},
      {key: 'outputTokensPerS', label: 'Tokens/s', num: true, render: (st) => fmt.int(st.outputTokensPerS)},
      {key: 'retryAfterS', label: 'Retry-After', num: true,
       render: (st) => (isNum(st.retryAfterS) ? `${st.retryAfterS} s` : '')},
      {key: 'costUsd', label: 'Cost', num: true, render: (st) => fmt.cost(st.costUsd)},
    ],
    rows: steps, rowKey: (st) => st.index, empty: 'No step was measured.',
  })));
  const extra = [];
  if (summary.rateLimit) {
    const rl = summary.rateLimit;
    extra.push(section('Rate-limit onset', h('p', null,
      `First 429 at step ${rl.stepIndex + 1} (concurrency ${rl.concurrency}): ${fmt.int(rl.rateLimited)} of ` +
      `${fmt.int(rl.requests)} refused at ${rps(rl.requestRate)}` +
      (isNum(rl.targetRps) ? ` (aiming at ${rps(rl.targetRps)})` : '') + '. ' +
      (isNum(rl.lastCleanRequestRate) ? `The last rate without any: ${rps(rl.lastCleanRequestRate)}.`
        : 'No step before it was clean.'))));
  } else if (test.profile === 'rate-limit') {
    extra.push(section('Rate-limit onset', h('p', null, 'No request was refused with 429 up to the last rate tried.')));
  }
  const firstStep = ([, v]) => (v.steps && v.steps.length ? Math.min(...v.steps) : Infinity);
  const phaseRows = summary.phases
    ? Object.entries(summary.phases).filter(([, v]) => v).sort((a, b) => firstStep(a) - firstStep(b)) : [];
  const windowRows = summary.failureWindow ? Object.entries(summary.failureWindow).filter(([, v]) => v) : [];
  for (const [title, rows] of [['Phases', phaseRows], ['Failure window', windowRows]]) {
    if (!rows.length) continue;
    extra.push(section(title, table({
      columns: [
        {key: 'name', label: title === 'Phases' ? 'Phase' : 'Part'},
        {key: 'requests', label: 'Requests', num: true, render: (v) => fmt.int(v.requests)},
        {key: 'errorRate', label: 'Error rate', num: true, render: (v) => fmt.pct(v.errorRate)},
        {key: 'errors', label: 'Errors by class', render: (v) => errorsText(v.errors)},
        {key: 'latency', label: 'p50 / p95 / p99', num: true, render: (v) => latencyText(v.latencyMs)},
      ],
      rows: rows.map(([name, v]) => ({...v, name})), rowKey: (r) => r.name,
    })));
  }
  const rec = summary.recovery;
  extra.push(section('Recovery', h('p', null, !rec ? 'No request failed.'
    : rec.recovered
      ? `First failure at ${rec.firstErrorS} s; recovered at ${rec.recoveredAtS} s, after ${rec.recoverySeconds} s ` +
        `(${fmt.int(rec.burstErrors)} of ${fmt.int(rec.burstRequests)} requests failed in between; recovered = ` +
        `${rec.streak} answers in a row).`
      : `First failure at ${rec.firstErrorS} s; not recovered before the test ended ` +
        `(${fmt.int(rec.burstErrors)} of ${fmt.int(rec.burstRequests)} requests failed since).`)));
  if ((summary.errorMessages || []).length) {
    extra.push(section('Most frequent failures', table({
      columns: [
        {key: 'count', label: 'Count', num: true, render: (m) => fmt.int(m.count)},
        {key: 'class', label: 'Class'},
        {key: 'message', label: 'Message', render: (m) => h('span', {class: 'wrap mono'}, m.message)},
      ],
      rows: summary.errorMessages,
    })));
  }
  out.push(...extra);
  out.push(section('Settings', h('dl', {class: 'kv'}, Object.entries(config).flatMap(([k, v]) => [
    h('dt', null, k),
    h('dd', null, v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v)),
  ]))));
  return out;
}

function thresholdsText(t) {
  if (!t) return '';
  return `Knee: the first step whose successor gained at most ${fmt.pct(t.kneeGrowth)} of throughput while its p95 ` +
    `grew by more than ${fmt.pct(t.kneeLatencyGrowth)}. Breaking point: the first step with an error rate above ` +
    `${fmt.pct(t.maxErrorRate)}${isNum(t.sloMs) ? ` or a p95 above ${fmt.ms(t.sloMs)}` : ''}.`;
}
