// Batches: search, sort and pages done by the server; all of it in the URL.
import {api, fill, h, pager, ready, route, setTitle, spinner, table} from '../core.js';
import {batchColumns, kindSwitch} from './overview.js';

const PAGE_SIZE = 25;
const SORTS = ['createdAt', 'batchId', 'runs', 'passRate', 'avgScore'];

route('/batches', async (ctx) => {
  const {root, query} = ctx;
  setTitle('Batches');
  const q = (query.get('q') || '').trim();
  const sort = SORTS.includes(query.get('sort')) ? query.get('sort') : 'createdAt';
  const order = query.get('order') === 'asc' ? 'asc' : 'desc';
  const page = Math.max(1, parseInt(query.get('page') || '1', 10) || 1);
  const kind = ['scenario', 'dataset'].includes(query.get('kind')) ? query.get('kind') : 'all';

  const input = h('input', {type: 'search', name: 'q', value: q, placeholder: 'batch id, agent, scenario…',
                            'aria-label': 'Search batches'});
  const form = h('form', {class: 'toolbar', role: 'search'},
                 h('label', null, 'Search', input),
                 h('button', {type: 'submit', class: 'primary'}, 'Search'),
                 q ? h('button', {type: 'button', class: 'clear',
                                  onclick: () => ctx.setQuery({q: null, page: null}, {replace: false})}, 'Clear') : null);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.setQuery({q: input.value.trim(), page: null}, {replace: false});
  });
  const results = h('div', {class: 'results'}, spinner('Loading batches…'));
  root.append(h('h1', null, 'Batches'), kindSwitch(ctx, kind, null, 'all'), form, results);

  const {data, headers} = await api('/batches', {q, sort, order, kind, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE});
  const totalHeader = headers.get('x-total-count');
  const total = totalHeader === null ? null : parseInt(totalHeader, 10);
  fill(results, 
    h('p', {class: 'muted result-count'},
      total === null ? '' : `${total.toLocaleString('en-US')} batch${total === 1 ? '' : 'es'}${q ? ` matching “${q}”` : ''}`),
    table({
      columns: batchColumns({sortable: true}),
      rows: data || [],
      sort, order,
      onSort: (key, nextOrder) => ctx.setQuery({sort: key, order: nextOrder, page: null}, {replace: false}),
      rowKey: (b) => b.batchId,
      empty: q ? `No batch matches “${q}”.` : 'No batches yet.',
    }),
    pager({page, pageSize: PAGE_SIZE, total, hasNext: (data || []).length === PAGE_SIZE,
           onPage: (p) => ctx.setQuery({page: p > 1 ? p : null}, {replace: false})}),
  );
  ready(root);
});
