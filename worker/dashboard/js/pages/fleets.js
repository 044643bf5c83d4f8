// /fleets : the fleet runs (GET /api/fleets); /fleets/:id?profile=&sort=&order= : one run's
// repository × provider matrix as a heatmap of pass rates with the numbers written in each
// cell, and every cell with a link to its runs in the batch (GET /api/fleets/:id).

import {
  h, api, route, link, table, statCards, section, spinner, errorBox, ready, fmt, badge, isNum, setTitle, sortRows,
} from '../core.js';
import {heatmap} from '../charts.js';
import {heading, emptyState, chartBox, batchHref} from '../page.js';

route('/fleets', async (ctx) => {
  const {root} = ctx;
  setTitle('Fleets');
  root.append(...heading('Fleets',
    'Fleet runs: every repository × provider × scenario profile of a manifest, run as one batch (bench fleet).'));
  const body = h('div', null, spinner('Loading fleet runs…'));
  root.append(body);
  let fleets;
  try {
    ({data: fleets} = await api('/fleets'));
  } catch (err) {
    body.replaceChildren(errorBox(err));
    ready(root);
    return;
  }
  fleets = Array.isArray(fleets) ? fleets : [];
  if (!fleets.length) {
    body.replaceChildren(emptyState('No fleet runs in the store yet. Describe the repositories, providers and ' +
                                    'profiles in a manifest (docs/fleets.md), then run it:',
                                    'bench fleet validate examples/fleet.yaml',
                                    'bench fleet examples/fleet.yaml'));
    ready(root);
    return;
  }
  const sort = ctx.query.get('sort') || 'createdAt';
  const order = ctx.query.get('order') === 'asc' ? 'asc' : 'desc';
  const rate = (f) => (f.totalRuns ? f.successfulRuns / f.totalRuns : null);
  const rows = sortRows(fleets, sort, order, sort === 'passRate' ? rate : (f) => f[sort]);
  body.replaceChildren(section(`${fmt.int(fleets.length)} fleet run${fleets.length === 1 ? '' : 's'}`, table({
    columns: [
      {key: 'batchId', label: 'Run', sortable: true,
       render: (f) => link(`/fleets/${encodeURIComponent(f.batchId)}`, f.batchId)},
      {key: 'fleetId', label: 'Fleet', sortable: true},
      {key: 'state', label: 'State', render: (f) => (f.state ? badge(f.state) : '')},
      {key: 'description', label: 'Description',
       render: (f) => (f.description ? h('span', {class: 'wrap'}, f.description) : '')},
      {key: 'createdAt', label: 'Started', sortable: true,
       render: (f) => h('span', {title: fmt.date(f.createdAt)}, fmt.ago(f.createdAt))},
      {key: 'totalRuns', label: 'Tests', num: true, sortable: true, render: (f) => fmt.int(f.totalRuns)},
      {key: 'passRate', label: 'Passed', num: true, sortable: true,
       render: (f) => `${fmt.pct(rate(f))} (${fmt.int(f.successfulRuns)})`},
      {key: 'avgScore', label: 'Mean score', num: true, sortable: true, render: (f) => fmt.score(f.avgScore)},
    ],
    rows, sort, order, rowKey: (f) => f.batchId,
    onSort: (key, next) => ctx.setQuery({sort: key === 'createdAt' ? '' : key, order: next === 'desc' ? '' : next},
                                        {replace: false}),
  })));
  ready(root);
});

/** A provider as stored in a cell ("agent:model") split into the batch page's filters. */
function providerFilters(provider) {
  const text = String(provider || '');
  const i = text.indexOf(':');
  return i < 0 ? {agent: text} : {agent: text.slice(0, i), model: text.slice(i + 1)};
}

/** The cells of one profile, or every profile's cells added up per repository and provider. */
function matrixCells(cells, profile) {
  const chosen = profile ? cells.filter((c) => c.profile === profile) : cells;
  const merged = new Map();
  for (const c of chosen) {
    const key = `${c.repoId}\u0000${c.provider}`;
    const m = merged.get(key) || {repoId: c.repoId, provider: c.provider, runs: 0, passed: 0, errors: 0,
                                  profiles: [], costUsd: 0, scoreSum: 0, scored: 0, p50Ms: []};
    m.runs += c.runs || 0;
    m.passed += c.passed || 0;
    m.errors += c.errors || 0;
    m.profiles.push(c.profile);
    m.costUsd = m.costUsd === null || !isNum(c.costUsd) ? null : m.costUsd + c.costUsd;
    if (isNum(c.avgScore)) {
      m.scoreSum += c.avgScore * (c.runs || 0);
      m.scored += c.runs || 0;
    }
    if (isNum(c.p50Ms)) m.p50Ms.push(c.p50Ms);
    merged.set(key, m);
  }
  for (const m of merged.values()) {
    m.passRate = m.runs ? m.passed / m.runs : null;
    m.avgScore = m.scored ? m.scoreSum / m.scored : null;
    // One profile: its own median; several: the median is not additive, so none is shown.
    m.p50Ms = m.profiles.length === 1 && m.p50Ms.length === 1 ? m.p50Ms[0] : null;
  }
  return merged;
}

/** Short column names that stay distinct once a chart cuts them to 15 characters: the model
 *  alone when that is enough, else P1, P2... (the page lists what each stands for). */
function columnLabels(providers) {
  const cut = (t) => t.slice(0, 15);
  const models = providers.map((p) => {
    const i = String(p).indexOf(':');
    return i < 0 ? String(p) : String(p).slice(i + 1);
  });
  for (const names of [providers.map(String), models]) {
    if (new Set(names.map(cut)).size === names.length && names.every((n) => n.length <= 16)) {
      return providers.map((p, i) => ({provider: p, label: names[i]}));
    }
  }
  return providers.map((p, i) => ({provider: p, label: `P${i + 1}`}));
}

/** Make each filled heatmap cell a link: a cell is known by its tooltip, "ROW × COLUMN LABEL: text". */
function linkCells(svgEl, rows, columns, hrefOf) {
  const NS = 'http://www.w3.org/2000/svg';
  for (const g of [...svgEl.querySelectorAll('g.cell')]) {
    const tip = g.querySelector('title');
    if (!tip) continue;
    const text = tip.textContent || '';
    let found = null;
    for (const r of rows) {
      for (const c of columns) {
        if (text.startsWith(`${r} × ${c.label}: `)) found = [r, c.provider];
      }
    }
    if (!found) continue;
    const a = document.createElementNS(NS, 'a');
    a.setAttribute('href', hrefOf(...found));
    a.setAttribute('class', 'cell-link');
    a.setAttribute('data-repo', found[0]);
    a.setAttribute('data-provider', found[1]);
    g.replaceWith(a);
    a.appendChild(g);
  }
  return svgEl;
}

route('/fleets/:id', async (ctx) => {
  const {root, params, query} = ctx;
  const id = params.id;
  setTitle(id, 'Fleets');
  root.append(h('p', {class: 'muted small'}, link('/fleets', '← Fleet runs')));
  const body = h('div', null, spinner('Loading the fleet run…'));
  root.append(body);
  let data;
  try {
    ({data} = await api(`/fleets/${encodeURIComponent(id)}`));
  } catch (err) {
    body.replaceChildren(h('h1', null, id), errorBox(err));
    ready(root);
    return;
  }
  const cells = data.cells || [];
  const profiles = (data.profiles || []).length ? data.profiles : [...new Set(cells.map((c) => c.profile))];
  const repos = (data.repositories || []).length ? data.repositories : [...new Set(cells.map((c) => c.repoId))];
  const providers = (data.providers || []).length ? data.providers : [...new Set(cells.map((c) => c.provider))];
  const profile = profiles.includes(query.get('profile')) ? query.get('profile') : '';
  const out = [];
  out.push(h('h1', null, data.fleetId ? `${data.fleetId}` : id),
           h('p', {class: 'subtitle'}, h('span', {class: 'mono'}, id), data.state ? [' · ', badge(data.state)] : null,
             data.description ? ` · ${data.description}` : null));
  const passRate = data.totalRuns ? data.successfulRuns / data.totalRuns : null;
  out.push(statCards([
    {label: 'Tests', value: fmt.int(data.totalRuns)},
    {label: 'Passed', value: fmt.pct(passRate), hint: `${fmt.int(data.successfulRuns)} of ${fmt.int(data.totalRuns)}`},
    {label: 'Matrix', value: `${repos.length} × ${providers.length}${profiles.length > 1 ? ` × ${profiles.length}` : ''}`,
     hint: `repositor${repos.length === 1 ? 'y' : 'ies'} × provider${providers.length === 1 ? '' : 's'}` +
           (profiles.length > 1 ? ' × profiles' : '')},
    {label: 'Started', value: fmt.ago(data.createdAt), hint: fmt.date(data.createdAt)},
  ]));
  if (!cells.length) {
    out.push(emptyState('This fleet run stored no test results yet. Where it is, and how to complete it:',
                        `bench fleet status ${id}`, `bench fleet resume ${id}`));
    body.replaceChildren(...out);
    ready(root);
    return;
  }
  const columns = columnLabels(providers);
  const matrix = matrixCells(cells, profile);
  const cellOf = (repo, provider) => matrix.get(`${repo}\u0000${provider}`) || null;
  const profilePicker = profiles.length > 1 ? h('div', {class: 'toolbar'}, h('label', null, 'Profile', h('select', {
    name: 'profile', onchange: (e) => ctx.setQuery({profile: e.target.value}, {replace: false}),
  }, h('option', {value: '', selected: !profile}, 'every profile'),
  profiles.map((p) => h('option', {value: p, selected: p === profile}, p))))) : null;
  out.push(section(profile ? `Pass rate: repository × provider (${profile})` : 'Pass rate: repository × provider',
    profilePicker,
    chartBox(linkCells(heatmap({
      title: `Pass rate of each repository (rows) with each provider (columns)${profile ? `, profile ${profile}` : ''}`,
      rows: repos, cols: columns.map((c) => ({key: c.provider, label: c.label})),
      value: (r, c) => {
        const m = cellOf(r, c);
        if (!m || !m.runs) return null;
        return {value: m.passRate, text: `${fmt.pct(m.passRate)} (${m.passed}/${m.runs})`};
      },
    }), repos, columns, (r, c) => batchHref(data.batchId || id, providerFilters(c))), '1100px', '560px'),
    columns.some((c) => c.label !== c.provider)
      ? h('p', {class: 'small column-key'}, 'Columns: ', columns.map((c, i) => [i ? ' · ' : '',
          h('strong', null, c.label), ` = ${c.provider}`])) : null,
    h('p', {class: 'muted small'}, 'Each cell: the share of its tests that passed, and passed / tests. Darker is ' +
      'higher; an empty cell (—) has no stored result. Each cell links to its runs, as does the table below.')));
  const rows = [];
  for (const r of repos) {
    for (const c of providers) {
      const m = cellOf(r, c);
      if (m) rows.push(m);
    }
  }
  const sort = query.get('sort') || '';
  const order = query.get('order') === 'desc' ? 'desc' : 'asc';
  const sorted = sort ? sortRows(rows, sort, order) : rows;
  out.push(section('Cells', table({
    columns: [
      {key: 'repoId', label: 'Repository', sortable: true},
      {key: 'provider', label: 'Provider', sortable: true},
      {key: 'passRate', label: 'Pass rate', num: true, sortable: true,
       render: (m) => `${fmt.pct(m.passRate)} (${fmt.int(m.passed)}/${fmt.int(m.runs)})`},
      {key: 'errors', label: 'Errors', num: true, sortable: true, render: (m) => fmt.int(m.errors)},
      {key: 'avgScore', label: 'Mean score', num: true, sortable: true, render: (m) => fmt.score(m.avgScore)},
      {key: 'p50Ms', label: 'p50', num: true, sortable: true, render: (m) => (isNum(m.p50Ms) ? fmt.ms(m.p50Ms) : '')},
      {key: 'costUsd', label: 'Cost', num: true, sortable: true, render: (m) => fmt.cost(m.costUsd)},
      {key: 'profiles', label: 'Profiles', render: (m) => m.profiles.join(', ')},
      {key: 'runs', label: 'Runs', render: (m) => link(batchHref(data.batchId || id, providerFilters(m.provider)),
                                                        `${m.provider} runs`)},
    ],
    rows: sorted, sort: sort || null, order, rowKey: (m) => `${m.repoId}|${m.provider}`,
    onSort: (key, next) => ctx.setQuery({sort: key, order: next}, {replace: false}),
  }), h('p', {class: 'muted small'}, 'The runs link opens the batch filtered to that provider\'s agent and model ' +
        '(every repository of the fleet), ', link(batchHref(data.batchId || id), 'the whole batch'), ', or ',
        link(`/datasets?${new URLSearchParams({batchId: data.batchId || id})}`, 'its dataset figures'), '.')));
  body.replaceChildren(...out);
  ready(root);
});
