// One run: scores and each evaluator's details, telemetry, the phase timeline, the transcript
// (pages of entries, long contents on request) and the workspace diff.
import {api, badge, errorBox, fill, fmt, h, link, ready, route, section, setTitle, spinner, statCards, table, tabs}
  from '../core.js';
import {s} from '../charts.js';

const TRANSCRIPT_PAGE = 50;
const DIFF_LINES = 3000;

// ------------------------------------------------------------------------------ diff

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/** Classify the lines of a unified diff: file, hunk, add, del, ctx or meta. Hunk headers'
 *  line counts tell a removed line starting with '--' from the next file's header. */
export function classifyDiff(lines) {
  const kinds = new Array(lines.length);
  let oldLeft = 0;
  let newLeft = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const inHunk = oldLeft > 0 || newLeft > 0;
    if (inHunk && line.startsWith('+')) { kinds[i] = 'add'; newLeft--; continue; }
    if (inHunk && line.startsWith('-')) { kinds[i] = 'del'; oldLeft--; continue; }
    if (inHunk && (line.startsWith(' ') || line === '')) { kinds[i] = 'ctx'; oldLeft--; newLeft--; continue; }
    if (line.startsWith('\\')) { kinds[i] = 'meta'; continue; }
    const hunk = HUNK.exec(line);
    if (hunk) {
      kinds[i] = 'hunk';
      oldLeft = hunk[1] === undefined ? 1 : parseInt(hunk[1], 10);
      newLeft = hunk[2] === undefined ? 1 : parseInt(hunk[2], 10);
      continue;
    }
    oldLeft = 0;
    newLeft = 0;
    if (line.startsWith('diff ') || line.startsWith('Index: ') || line.startsWith('--- ') || line.startsWith('+++ ')) {
      kinds[i] = 'file';
    } else {
      kinds[i] = 'meta';
    }
  }
  return kinds;
}

/** A unified diff as lines, each classed (added, removed, hunk, file header); text only. */
export function renderDiff(patch, {maxLines = DIFF_LINES} = {}) {
  const box = h('div', {class: 'diff', role: 'region', 'aria-label': 'workspace diff'});
  const lines = patch.replace(/\n$/, '').split('\n');
  const kinds = classifyDiff(lines);
  let shown = 0;
  const add = (from, to) => {
    const frag = document.createDocumentFragment();
    for (let i = from; i < to; i++) {
      const div = document.createElement('div');
      div.className = `dl d-${kinds[i]}`;
      div.textContent = lines[i];
      frag.appendChild(div);
    }
    box.appendChild(frag);
    shown = to;
  };
  add(0, Math.min(lines.length, maxLines));
  if (shown < lines.length) {
    const more = h('button', {type: 'button', class: 'show-all-lines'},
                   `Show the other ${fmt.int(lines.length - shown)} lines`);
    more.addEventListener('click', () => {
      more.remove();
      add(shown, lines.length);
    });
    return h('div', null, box, more);
  }
  return box;
}

/** The diff section of a run: summary, changed files and the patch. */
export async function diffView(runId) {
  const {data} = await api(`/runs/${encodeURIComponent(runId)}/diff`);
  const files = data.changedFiles || [];
  const parts = [];
  if (data.summary) parts.push(h('p', {class: 'diff-summary'}, data.summary));
  if (files.length) {
    parts.push(h('details', {class: 'changed-files'}, h('summary', null, `${files.length} changed file${files.length === 1 ? '' : 's'}`),
      h('ul', null, files.map((f) => h('li', null, h('code', null, typeof f === 'string' ? f : (f.path || JSON.stringify(f))),
                                                  typeof f === 'object' && f && f.status ? ` (${f.status})` : '')))));
  }
  if (data.truncated) parts.push(h('p', {class: 'note'}, 'The stored diff was cut: it was too large to keep whole.'));
  if (typeof data.patch === 'string' && data.patch.length) parts.push(renderDiff(data.patch));
  else parts.push(h('p', {class: 'muted no-diff'}, 'No patch stored for this run (no change, or a run stored before diffs were kept).'));
  return h('div', {class: 'diff-view'}, parts);
}

// ------------------------------------------------------------------------------ transcript

function pretty(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') {
    const t = value.trim();
    if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  return JSON.stringify(value, null, 2);
}

function firstLine(text, n = 90) {
  const line = String(text || '').split('\n').find((l) => l.trim()) || '';
  return line.length > n ? line.slice(0, n - 1) + '…' : line;
}

function compact(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value));
    } catch {
      return value.replace(/\s+/g, ' ');
    }
  }
  return JSON.stringify(value);
}

function toolCallBlock(call) {
  const args = pretty(call.arguments);
  const line = compact(call.arguments);
  return h('details', {class: 'tool-call'},
    h('summary', null, '⚙ tool call ', h('strong', null, call.name || '(unnamed)'),
      line ? h('span', {class: 'muted small'}, ` ${line.length > 80 ? line.slice(0, 79) + '…' : line}`) : null),
    h('pre', {class: 'args'}, args || '(no arguments)'),
    call.cut ? h('p', {class: 'muted small'}, 'Arguments cut; “Show all” on the entry loads them whole.') : null);
}

function entryNode(runId, entry) {
  const role = String(entry.role || 'unknown');
  const content = h('div', {class: 'content'}, entry.content || '');
  const calls = h('div', {class: 'calls-block'}, (entry.toolCalls || []).map(toolCallBlock));
  const head = h('div', {class: 'entry-head'},
    h('span', {class: 'entry-index'}, `#${entry.index}`),
    h('span', {class: 'entry-role'}, role),
    entry.name ? h('code', null, entry.name) : null,
    entry.isError ? badge('error') : null,
    h('span', {class: 'muted small'}, `${fmt.int(entry.contentChars)} chars`));
  const node = h('article', {class: `entry role-${role.replace(/[^a-z_-]/gi, '')}${entry.isError ? ' is-error' : ''}`,
                             'data-index': String(entry.index)}, head);
  // Tool results are folded: they are long and read only when needed.
  const folded = role === 'tool' && entry.content;
  if (folded) {
    node.append(h('details', {class: 'tool-result'},
      h('summary', null, '↳ result', entry.name ? ` of ${entry.name}` : '', h('span', {class: 'muted small'}, ` ${firstLine(entry.content, 70)}`)),
      content));
  } else if (entry.content) {
    node.append(content);
  }
  node.append(calls);
  if (entry.cut) {
    const more = h('button', {type: 'button', class: 'show-all'}, `Show all (${fmt.int(entry.contentChars)} chars)`);
    more.addEventListener('click', async () => {
      more.disabled = true;
      more.textContent = 'Loading…';
      try {
        const {data} = await api(`/runs/${encodeURIComponent(runId)}/transcript`, {entry: entry.index});
        const whole = data.entry || {};
        const text = typeof whole === 'object' && whole !== null ? whole.content : whole;
        content.textContent = typeof text === 'string' ? text : pretty(text);
        const folder = content.closest('details');
        if (folder) folder.open = true;
        const full = (whole && Array.isArray(whole.tool_calls) ? whole.tool_calls : []).map((c) => toolCallBlock({
          id: c.id, name: c.name, arguments: c.arguments}));
        if (full.length) fill(calls, full);
        more.remove();
      } catch (err) {
        more.replaceWith(errorBox(err));
      }
    });
    node.append(more);
  }
  return node;
}

async function transcriptView(runId) {
  const list = h('div', {class: 'transcript'});
  const status = h('p', {class: 'muted transcript-count'});
  const moreSlot = h('div', {class: 'more-slot'});
  const box = h('div', {class: 'transcript-view'}, status, list, moreSlot);
  let offset = 0;
  let total = 0;
  const loadPage = async () => {
    const {data} = await api(`/runs/${encodeURIComponent(runId)}/transcript`, {offset, limit: TRANSCRIPT_PAGE});
    total = data.total || 0;
    const entries = data.entries || [];
    const frag = document.createDocumentFragment();
    for (const e of entries) frag.appendChild(entryNode(runId, e));
    list.appendChild(frag);
    offset += entries.length;
    status.textContent = total
      ? `${fmt.int(offset)} of ${fmt.int(total)} entries shown${data.truncated ? ' · the stored transcript was capped' : ''}`
      : 'No transcript stored for this run.';
    fill(moreSlot);
    if (offset < total && entries.length > 0) {
      const more = h('button', {type: 'button', class: 'load-more'},
                     `Load ${fmt.int(Math.min(TRANSCRIPT_PAGE, total - offset))} more (${fmt.int(total - offset)} left)`);
      more.addEventListener('click', async () => {
        more.disabled = true;
        more.textContent = 'Loading…';
        try {
          await loadPage();
        } catch (err) {
          fill(moreSlot, errorBox(err));
        }
      });
      moreSlot.append(more);
    }
  };
  await loadPage();
  return box;
}

// ------------------------------------------------------------------------------ phases

const PHASE_ORDER = ['warmup', 'workspace', 'agent.model', 'agent.tools', 'agent.other', 'diff', 'grading.copy',
                     'validation', 'evaluator', 'grading.other', 'cleanup', 'storage', 'other'];

function phaseRank(name) {
  const exact = PHASE_ORDER.indexOf(name);
  if (exact >= 0) return exact;
  const head = PHASE_ORDER.indexOf(name.split('.')[0]);
  return head >= 0 ? head : PHASE_ORDER.length;
}

/** The phases laid end to end as a timeline: one row per phase, its bar placed after the previous. */
export function phaseTimeline(phases) {
  const rows = (phases || []).filter((p) => typeof p.totalMs === 'number')
    .sort((a, b) => phaseRank(a.phase) - phaseRank(b.phase) || a.phase.localeCompare(b.phase));
  const totalMs = rows.reduce((sum, p) => sum + p.totalMs, 0);
  const W = 640;
  const row = 22;
  const m = {l: 190, r: 90, t: 8, b: 30};
  const H = m.t + m.b + Math.max(1, rows.length) * row;
  const svg = s('svg', {class: 'chart timeline', role: 'img', viewBox: `0 0 ${W} ${H}`, width: '100%',
                        'aria-label': `Phase timeline, ${fmt.ms(totalMs)} in all`},
                s('title', null, `Phase timeline, ${fmt.ms(totalMs)} in all`));
  if (!rows.length || totalMs <= 0) {
    svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, 'no phases recorded'));
    return svg;
  }
  const px = (ms) => m.l + (ms / totalMs) * (W - m.l - m.r);
  let at = 0;
  rows.forEach((p, i) => {
    const y = m.t + i * row;
    const x = px(at);
    const w = Math.max(1.5, px(at + p.totalMs) - x);
    const label = p.label || p.phase;
    const share = p.totalMs / totalMs;
    svg.append(s('g', {class: 'phase-row', 'data-phase': p.phase},
      s('text', {x: m.l - 8, y: y + row / 2 + 4, 'text-anchor': 'end', class: 'label'}, label.length > 28 ? label.slice(0, 27) + '…' : label),
      s('line', {x1: m.l, x2: W - m.r, y1: y + row / 2, y2: y + row / 2, class: 'track', stroke: '#eef0f3'}),
      s('rect', {x, y: y + 4, width: w, height: row - 8, class: `phase phase-${p.stage || 'other'}`}),
      s('text', {x: Math.min(x + w + 5, W - m.r + 4), y: y + row / 2 + 4, class: 'value'},
        `${fmt.ms(p.totalMs)}${share >= 0.01 ? ` · ${Math.round(share * 100)}%` : ''}`),
      s('title', null, `${label}: ${fmt.ms(p.totalMs)}, starts at ${fmt.ms(at)} (${(share * 100).toFixed(1)}% of the run)`)));
    at += p.totalMs;
  });
  const axisY = H - m.b + 6;
  svg.append(s('line', {x1: m.l, x2: W - m.r, y1: axisY, y2: axisY, class: 'axis', stroke: '#8a939f'}));
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(s('text', {x: px(totalMs * f), y: axisY + 14, 'text-anchor': 'middle', class: 'tick'}, fmt.ms(totalMs * f)));
  }
  return svg;
}

// ------------------------------------------------------------------------------ scores, telemetry

/** What an evaluation says: for one that ran (status ok) its result, passed, partial or failed
 *  from its score; otherwise why it did not run (skipped, error). "ok" alone would read as a pass. */
export function evaluationOutcome(e) {
  if (e.status !== 'ok' || typeof e.score !== 'number') return e.status;
  const max = typeof e.maxScore === 'number' && e.maxScore > 0 ? e.maxScore : 1;
  return e.score >= max ? 'passed' : e.score > 0 ? 'partial' : 'failed';
}

function evaluationNode(e) {
  const details = e.details;
  const text = details === null || details === undefined ? '' : typeof details === 'string' ? details : JSON.stringify(details, null, 2);
  const score = typeof e.score === 'number'
    ? `${fmt.score(e.score)}${typeof e.maxScore === 'number' ? ` / ${fmt.score(e.maxScore)}` : ''}` : '—';
  return h('details', {class: 'evaluation', 'data-evaluator': e.evaluatorName},
    h('summary', null, h('strong', null, e.evaluatorName), ' · ', h('span', {class: 'eval-score'}, score), ' ',
      badge(evaluationOutcome(e)),
      text ? h('span', {class: 'muted small'}, ` ${firstLine(text, 80)}`) : null),
    text ? h('pre', {class: 'eval-details'}, text) : h('p', {class: 'muted'}, 'No details.'));
}

function telemetryCards(t) {
  if (!t) return h('p', {class: 'muted'}, 'No telemetry stored for this run.');
  const tokens = (t.tokensIn || 0) + (t.tokensOut || 0);
  return statCards([
    {label: 'Tokens', value: fmt.int(tokens), hint: `${fmt.int(t.tokensIn)} in · ${fmt.int(t.tokensOut)} out`},
    {label: 'Cache', value: fmt.int((t.cacheReadTokens || 0) + (t.cacheWriteTokens || 0)),
     hint: `${fmt.int(t.cacheReadTokens)} read · ${fmt.int(t.cacheWriteTokens)} written`},
    {label: 'Cost', value: fmt.cost(t.costUsd), hint: `judge ${fmt.cost(t.judgeCostUsd)}`},
    {label: 'Turns', value: fmt.int(t.turns)},
    {label: 'Tool calls', value: fmt.int(t.toolCalls)},
    {label: 'Duration', value: fmt.ms(t.durationMs)},
  ]);
}

function runFacts(run) {
  const m = run.metadata || {};
  const items = [
    ['Batch', run.batchId ? link(`/batches/${encodeURIComponent(run.batchId)}`, run.batchId) : '—'],
    ['Scenario', `${run.suite}/${run.scenario}`],
    ['Tier', m.tierLabel && m.tierLabel !== run.tier ? `${run.tier} (${m.tierLabel})` : run.tier],
    ['Agent', run.agent],
    ['Model', run.model || '—'],
    ['Iteration', m.iteration !== undefined ? String(m.iteration) : '—'],
    ['Specialist', run.specialistEnabled ? `${run.specialistName}@${run.specialistVersion}` : 'none'],
    ['Started', fmt.date(run.startedAt)],
    ['Completed', fmt.date(run.completedAt)],
    ['Failure class', run.failureClass || '—'],
    ['Config hash', h('code', null, (run.configHash || '—').slice(0, 16))],
    m.retryOf ? ['Retry of', link(`/runs/${encodeURIComponent(m.retryOf)}`, m.retryOf)] : null,
    m.cached ? ['Cached', 'model answers replayed from the cache'] : null,
  ].filter(Boolean);
  return h('dl', {class: 'kv'}, items.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

// What grading found worth a look: a forged report (canaries), changes that could steer grading.
function reviewNotes(m) {
  const tampered = Array.isArray(m.tampered) ? m.tampered : [];
  const suspicious = Array.isArray(m.suspicious) ? m.suspicious : [];
  if (!tampered.length && !suspicious.length) return null;
  return h('div', {class: 'review-notes'},
    tampered.length ? h('div', {class: 'note tampered'}, h('strong', null, 'Tampered: '),
                        'the test report was forged.', h('ul', null, tampered.map((e) => h('li', null, String(e)))))
      : null,
    suspicious.length ? h('div', {class: 'note suspicious'}, h('strong', null, 'Suspicious changes: '),
                          h('ul', null, suspicious.map((e) => h('li', null, String(e))))) : null);
}

async function otherRuns(run) {
  const {data} = await api('/runs', {suite: run.suite, scenario: run.scenario, limit: 11});
  const others = (data || []).filter((r) => r.runId !== run.runId).slice(0, 10);
  if (!others.length) return h('p', {class: 'muted'}, 'No other run of this scenario is stored.');
  return table({
    columns: [
      {key: 'runId', label: 'Run', render: (r) => link(`/runs/${encodeURIComponent(r.runId)}`, r.runId)},
      {key: 'agent', label: 'Agent'},
      {key: 'status', label: 'Status', render: (r) => badge(r.status)},
      {key: 'totalScore', label: 'Score', num: true, render: (r) => fmt.score(r.totalScore)},
      {key: 'cmp', label: '', render: (r) => link(`/compare?runA=${encodeURIComponent(run.runId)}&runB=${encodeURIComponent(r.runId)}`,
                                                 'compare')},
    ],
    rows: others,
    rowKey: (r) => r.runId,
  });
}

// ------------------------------------------------------------------------------ page

const TABS = [{id: 'summary', label: 'Summary'}, {id: 'transcript', label: 'Transcript'}, {id: 'diff', label: 'Diff'}];

route('/runs/:id', async (ctx) => {
  const {root, params, query} = ctx;
  const id = params.id;
  const tab = TABS.some((t) => t.id === query.get('tab')) ? query.get('tab') : 'summary';
  setTitle(id, 'Run');
  root.append(h('h1', null, 'Run ', h('code', null, id)), spinner('Loading the run…'));
  const {data} = await api(`/runs/${encodeURIComponent(id)}`);
  const {run, evaluations, telemetry} = data;
  const body = h('div', {class: 'tab-body', 'data-tab': tab});
  fill(root, 
    h('p', {class: 'crumbs'}, run.batchId ? link(`/batches/${encodeURIComponent(run.batchId)}`, `← Batch ${run.batchId}`)
                                          : link('/batches', '← Batches')),
    h('h1', null, 'Run ', h('code', null, run.runId), ' ', badge(run.status)),
    h('p', {class: 'subtitle'}, `${run.suite}/${run.scenario} · ${run.tier} · ${run.agent}${run.model ? ` · ${run.model}` : ''}`),
    statCards([
      {label: 'Score', value: fmt.score(run.totalScore)},
      {label: 'Weighted score', value: fmt.score(run.weightedScore)},
      {label: 'Success', value: run.isSuccessful ? '✓ yes' : '✗ no'},
      {label: 'Cost', value: fmt.cost(telemetry ? telemetry.costUsd : null)},
      {label: 'Duration', value: fmt.ms(telemetry ? telemetry.durationMs : null)},
    ]),
    tabs({tabs: TABS, current: tab, onSelect: (t) => ctx.setQuery({tab: t === 'summary' ? null : t}, {replace: false})}),
    body,
  );

  if (tab === 'summary') {
    const phasesSlot = h('div', {class: 'phases'}, spinner('Loading the phases…'));
    const othersSlot = h('div', {class: 'other-runs'}, spinner('Loading other runs…'));
    body.append(
      section('Scores', (evaluations || []).length
        ? h('div', {class: 'evaluations'}, evaluations.map(evaluationNode))
        : h('p', {class: 'muted'}, 'No evaluator ran.'),
      (run.metadata || {}).gatingFailures && run.metadata.gatingFailures.length
        ? h('p', {class: 'note'}, `Gating failures: ${run.metadata.gatingFailures.join(', ')}`) : null,
      reviewNotes(run.metadata || {})),
      section('Telemetry', telemetryCards(telemetry)),
      section('Phases', phasesSlot),
      section('Details', runFacts(run)),
      section('Compare with another run of this scenario', othersSlot),
    );
    ready(root);
    const [profile, others] = await Promise.allSettled([
      api(`/runs/${encodeURIComponent(run.runId)}/profile`), otherRuns(run)]);
    if (profile.status === 'fulfilled') {
      const p = profile.value.data;
      fill(phasesSlot, phaseTimeline(p.phases), p.summary ? h('p', {class: 'muted'}, p.summary) : null);
    } else {
      fill(phasesSlot, errorBox(profile.reason));
    }
    fill(othersSlot, others.status === 'fulfilled' ? others.value : errorBox(others.reason));
  } else {
    // The tab's own content is what this view is for: ready once it is in.
    body.append(spinner(tab === 'transcript' ? 'Loading the transcript…' : 'Loading the diff…'));
    try {
      fill(body, await (tab === 'transcript' ? transcriptView(run.runId) : diffView(run.runId)));
    } catch (err) {
      fill(body, errorBox(err));
    }
    ready(root);
  }
});
