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

function scenarioSection(result) {
  const rows = result.scenarios || [];
  if (!rows.length) return h('p', {class: 'muted'}, 'No scenario was run by both sides.');
  return h('div', null,
    barChart({
      title: 'Score difference A − B by scenario',
      bars: rows.map((r) => ({label: r.scenario, value: r.difference,
                              note: r.winner ? `(${r.winner} better)` : ''})),
      xLabel: 'mean score difference (A − B)', format: (v) => signed(v),
    }),
    table({
      columns: [
        {key: 'scenario', label: 'Scenario'},
        {key: 'pairs', label: 'Pairs', num: true, render: (r) => fmt.int(r.pairs)},
        {key: 'meanA', label: 'A', num: true, render: (r) => fmt.score(r.meanA)},
        {key: 'meanB', label: 'B', num: true, render: (r) => fmt.score(r.meanB)},
        {key: 'difference', label: 'A − B', num: true, render: (r) => signed(r.difference)},
        {key: 'p', label: 'p', num: true, render: (r) => pValue(r.p)},
        {key: 'pHolm', label: 'p (Holm)', num: true, render: (r) => pValue(r.pHolm)},
        {key: 'verdict', label: 'Verdict', render: (r) => verdictBadge(scenarioVerdict(r))},
        {key: 'note', label: 'Note', render: (r) => r.note || ''},
      ],
      rows,
      rowKey: (r) => r.scenario,
    }));
}

async function compareSides(ctx, a, b) {
  const {root} = ctx;
  setTitle(`${a} vs ${b}`, 'Compare');
  const slot = h('div', null, spinner('Comparing…'));
  root.append(h('h1', null, 'Compare'), slot);
  const {data: r} = await api('/compare', {a, b});
  const score = (r.metrics || []).find((m) => m.metric === 'score');
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
    section('Per scenario', scenarioSection(r)),
  );
  ready(root);
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
