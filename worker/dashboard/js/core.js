// The dashboard's core: DOM building, the API client, the router, shared widgets and number
// formatting. Pages build on this module, charts.js (SVG), page.js (the pieces of a page) and
// filters.js (filter forms kept in the URL). Data always reaches the DOM as text nodes or
// attribute values, never as HTML.

const KEY_STORAGE = 'zebench.apiKey';

// ------------------------------------------------------------------------------ DOM

function append(el, child) {
  if (child === null || child === undefined || child === false || child === true) return;
  if (Array.isArray(child)) {
    for (const c of child) append(el, c);
    return;
  }
  if (child instanceof Node) {
    el.appendChild(child);
    return;
  }
  el.appendChild(document.createTextNode(String(child)));
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'style' && typeof value === 'object') {
      for (const [prop, v] of Object.entries(value)) {
        if (v !== undefined && v !== null) el.style.setProperty(prop, String(v));
      }
    } else if (name === 'dataset' && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (name === 'value' && 'value' in el) {
      el.value = String(value);
    } else if (name === 'checked' || name === 'selected' || name === 'disabled' || name === 'open') {
      el[name] = Boolean(value);
      if (value) el.setAttribute(name, '');
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
}

/** Replace the children of ``el`` (same children rules as h: null and false skipped, arrays flattened). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** An element: h('a', {href: '/x', class: 'c', onclick: fn}, 'text', node, [more]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs && (attrs instanceof Node || Array.isArray(attrs) || typeof attrs !== 'object')) {
    children.unshift(attrs);
  } else {
    setAttrs(el, attrs);
  }
  append(el, children);
  return el;
}

// ------------------------------------------------------------------------------ API

export class ApiError extends Error {
  constructor(status, error, details, path) {
    super(details ? `${error}: ${details}` : String(error));
    this.name = 'ApiError';
    this.status = status;
    this.error = error;
    this.details = details;
    this.path = path;
  }
}

export function apiKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) || '';
  } catch {
    return '';
  }
}

export function setApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    /* storage unavailable: the key lasts for this page only */
  }
}

/** The URL of an API path with its query parameters (undefined, null and '' are left out). */
export function apiUrl(path, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    query.set(k, String(v));
  }
  const text = query.toString();
  return '/api' + path + (text ? '?' + text : '');
}

/** GET '/api' + path; resolves to {data, headers}; throws ApiError. */
export async function api(path, params = {}) {
  const url = apiUrl(path, params);
  const headers = {Accept: 'application/json'};
  const key = apiKey();
  if (key) headers.Authorization = 'Bearer ' + key;
  let response;
  try {
    response = await fetch(url, {headers});
  } catch (err) {
    throw new ApiError(0, 'network error', String(err && err.message ? err.message : err), url);
  }
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const body = data && typeof data === 'object' ? data : {};
    throw new ApiError(response.status, body.error || response.statusText || 'request failed',
                       body.details || '', url);
  }
  return {data, headers: response.headers};
}

// ------------------------------------------------------------------------------ router

const routes = [];
let renderToken = 0;
let appRoot = null;

function compile(pattern) {
  const names = [];
  const source = pattern.replace(/\/+$/, '').split('/').map((part) => {
    if (part.startsWith(':')) {
      names.push(part.slice(1));
      return '([^/]+)';
    }
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  return {regex: new RegExp('^' + (source || '') + '/?$'), names};
}

/** Register a page: route('/batches/:id', ctx => ...). */
export function route(pattern, render) {
  const {regex, names} = compile(pattern);
  routes.push({pattern, regex, names, render});
}

function match(pathname) {
  for (const r of routes) {
    const m = r.regex.exec(pathname);
    if (m) {
      const params = {};
      r.names.forEach((name, i) => {
        try {
          params[name] = decodeURIComponent(m[i + 1]);
        } catch {
          params[name] = m[i + 1];
        }
      });
      return {route: r, params};
    }
  }
  return null;
}

function markNav(pathname) {
  for (const a of document.querySelectorAll('header nav a')) {
    const href = a.getAttribute('href');
    const current = href === '/' ? pathname === '/' : pathname === href || pathname.startsWith(href + '/');
    if (current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function render() {
  if (!appRoot) return;
  const token = ++renderToken;
  const pathname = location.pathname;
  const found = match(pathname);
  appRoot.dataset.state = 'loading';
  const root = h('div', {class: 'page'});
  appRoot.replaceChildren(root);
  markNav(pathname);
  const query = new URLSearchParams(location.search);
  const ctx = {
    params: found ? found.params : {},
    query,
    root,
    setQuery(values, {replace = true} = {}) {
      if (token !== renderToken) return;
      const next = new URLSearchParams(location.search);
      for (const [k, v] of Object.entries(values || {})) {
        if (v === undefined || v === null || v === '') next.delete(k);
        else next.set(k, String(v));
      }
      const text = next.toString();
      const url = location.pathname + (text ? '?' + text : '');
      if (replace) history.replaceState(null, '', url);
      else history.pushState(null, '', url);
      render();
    },
  };
  if (!found) {
    document.title = 'Not found · zebench';
    root.append(h('h1', null, 'Page not found'),
                h('p', null, 'No page at ', h('code', null, pathname), '. ', link('/', 'Go to the overview'), '.'));
    ready(root);
    return;
  }
  try {
    await found.route.render(ctx);
  } catch (err) {
    if (token !== renderToken) return;
    // What was loading will not come: its spinners give way to the error.
    for (const el of root.querySelectorAll('.spinner')) el.remove();
    root.append(errorBox(err));
    ready(root);
  }
}

/** Go to an URL inside the dashboard (pushState) and render it. */
export function navigate(url) {
  history.pushState(null, '', url);
  window.scrollTo(0, 0);
  render();
}

/** Re-render the current URL (after the API key changed, for example). */
export function refresh() {
  render();
}

function internalHref(a) {
  if (!a || a.getAttribute('target') || a.hasAttribute('download')) return null;
  const href = a.getAttribute('href');
  if (!href || href.startsWith('#')) return null;
  const url = new URL(href, location.href);
  if (url.origin !== location.origin) return null;
  if (url.pathname.startsWith('/api/') || url.pathname.startsWith('/assets/')) return null;
  if (url.pathname === '/health' || url.pathname === '/openapi.json') return null;
  return url.pathname + url.search + url.hash;
}

/** Start the router on #app: render the current URL and follow links and history. */
export function start(root = document.getElementById('app')) {
  appRoot = root;
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = event.target instanceof Element ? event.target.closest('a[href]') : null;
    const target = internalHref(a);
    if (target === null) return;
    event.preventDefault();
    navigate(target);
  });
  window.addEventListener('popstate', () => render());
  render();
}

/** An <a> the router follows without reloading. */
export function link(href, ...children) {
  return h('a', {href}, children.length ? children : href);
}

/** Mark the page ready: its first content is in (tests wait for #app[data-state=ready]). */
export function ready(root) {
  if (root && !root.isConnected) return;
  const app = document.getElementById('app');
  if (app) app.dataset.state = 'ready';
}

/** The document title of a page. */
export function setTitle(...parts) {
  document.title = [...parts.filter(Boolean), 'zebench'].join(' · ');
}

// ------------------------------------------------------------------------------ widgets

function sortGlyph(active, order) {
  if (!active) return '↕';
  return order === 'asc' ? '▲' : '▼';
}

/** A table inside a horizontally scrolling box; sortable headers call onSort(key, order).
 *  columns: [{key, label, num?, sortable?, wrap? (long text wraps), render?: row => node|string}] */
export function table({columns, rows, sort, order, onSort, empty, rowKey, caption}) {
  const head = h('tr', null, columns.map((col) => {
    const active = sort === col.key;
    const attrs = {scope: 'col', class: col.num ? 'num' : null};
    if (col.sortable && onSort) {
      attrs['aria-sort'] = active ? (order === 'asc' ? 'ascending' : 'descending') : 'none';
      const nextOrder = active && order === 'desc' ? 'asc' : active ? 'desc' : (col.num ? 'desc' : 'asc');
      return h('th', attrs, h('button', {
        type: 'button', class: 'sort', 'data-sort': col.key,
        title: `sort by ${col.label}`,
        onclick: () => onSort(col.key, nextOrder),
      }, col.label, ' ', h('span', {class: 'sort-glyph', 'aria-hidden': 'true'}, sortGlyph(active, order))));
    }
    return h('th', attrs, col.label);
  }));
  const body = h('tbody');
  if (!rows || rows.length === 0) {
    body.append(h('tr', {class: 'empty'}, h('td', {colspan: columns.length}, empty || 'Nothing to show.')));
  } else {
    for (const row of rows) {
      const tr = h('tr', rowKey ? {'data-key': String(rowKey(row))} : null);
      for (const col of columns) {
        let value;
        if (col.render) value = col.render(row);
        else value = row[col.key];
        if (value === undefined || value === null || value === '') value = '—';
        const cls = [col.num ? 'num' : '', col.wrap ? 'wrap' : ''].filter(Boolean).join(' ');
        tr.append(h('td', {class: cls || null, 'data-col': col.key}, value));
      }
      body.append(tr);
    }
  }
  return h('div', {class: 'table-wrap'},
           h('table', null, caption ? h('caption', null, caption) : null, h('thead', null, head), body));
}

/** Sort rows by a column's value (for a table sorted in the page); null and undefined always last. */
export function sortRows(rows, key, order, valueOf = (r) => r[key]) {
  const dir = order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = valueOf(a);
    const y = valueOf(b);
    const xn = x === null || x === undefined;
    const yn = y === null || y === undefined;
    if (xn || yn) return xn && yn ? 0 : xn ? 1 : -1;
    if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
    return String(x).localeCompare(String(y), 'en', {numeric: true}) * dir;
  });
}

/** Previous/next page buttons; page is 1-based; total may be unknown (then hasNext decides). */
export function pager({page, pageSize, total, hasNext, onPage}) {
  const pages = total !== undefined && total !== null ? Math.max(1, Math.ceil(total / pageSize)) : null;
  const more = pages !== null ? page < pages : Boolean(hasNext);
  let text = `Page ${fmt.int(page)}`;
  if (pages !== null) text += ` of ${fmt.int(pages)}`;
  if (total !== undefined && total !== null) text += ` · ${fmt.int(total)} in all`;
  return h('nav', {class: 'pager', 'aria-label': 'pages'},
           h('button', {type: 'button', class: 'prev', disabled: page <= 1,
                        onclick: () => onPage(page - 1)}, '← Previous'),
           h('span', {class: 'pager-text'}, text),
           h('button', {type: 'button', class: 'next', disabled: !more,
                        onclick: () => onPage(page + 1)}, 'Next →'));
}

/** Figures in cards: [{label, value, hint?}]. */
export function statCards(cards) {
  return h('div', {class: 'cards'}, cards.map((c) => h('div', {class: 'card'},
    h('div', {class: 'card-label'}, c.label),
    h('div', {class: 'card-value'}, c.value === undefined || c.value === null ? '—' : c.value),
    c.hint ? h('div', {class: 'card-hint'}, c.hint) : null)));
}

/** <section><h2>title</h2>...</section> */
export function section(title, ...children) {
  return h('section', {class: 'section'}, h('h2', null, title), children);
}

const STATUS_GLYPHS = {
  completed: '✓', success: '✓', passed: '✓', ok: '✓', improved: '▲', stored: '✓',
  failed: '✗', regressed: '▼', regression: '▼',
  error: '!', timeout: '⏱', budget_exceeded: '$', interrupted: '■',
  skipped: '–', unchanged: '=', flaky: '~', inconclusive: '?', new: '+', missing: '∅',
  running: '…', partial: '◐',
};

const STATUS_KIND = {
  completed: 'good', success: 'good', passed: 'good', ok: 'good', improved: 'good', stored: 'good',
  failed: 'bad', regressed: 'bad', regression: 'bad', error: 'bad', timeout: 'warn',
  budget_exceeded: 'warn', interrupted: 'warn', flaky: 'warn', inconclusive: 'neutral',
  skipped: 'neutral', unchanged: 'neutral', new: 'neutral', missing: 'warn', running: 'neutral',
  partial: 'warn',
};

/** A status word with a shape glyph (never colour alone). */
export function badge(status) {
  const word = status === undefined || status === null || status === '' ? 'unknown' : String(status);
  const kind = STATUS_KIND[word] || 'neutral';
  return h('span', {class: `badge badge-${kind}`, 'data-status': word},
           h('span', {class: 'glyph', 'aria-hidden': 'true'}, STATUS_GLYPHS[word] || '•'),
           ' ', word.replace(/_/g, ' '));
}

const VERDICTS = {
  'A better': ['▲', 'a'],
  'B better': ['▼', 'b'],
  'no detectable difference': ['=', 'same'],
  'not enough runs': ['?', 'few'],
  'not comparable': ['⊘', 'refused'],
};

/** A comparison verdict with its glyph. */
export function verdictBadge(verdict) {
  const word = verdict || 'unknown';
  const [glyph, kind] = VERDICTS[word] || ['•', 'neutral'];
  return h('span', {class: `badge verdict verdict-${kind}`, 'data-verdict': word},
           h('span', {class: 'glyph', 'aria-hidden': 'true'}, glyph), ' ', word);
}

export function spinner(text) {
  return h('p', {class: 'spinner', role: 'status'}, h('span', {class: 'spin', 'aria-hidden': 'true'}),
           ' ', text || 'Loading…');
}

function keyForm() {
  const input = h('input', {type: 'password', name: 'key', autocomplete: 'off', placeholder: 'API key',
                            'aria-label': 'API key'});
  const form = h('form', {class: 'key-form'}, input, h('button', {type: 'submit'}, 'Use this key'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setApiKey(input.value.trim());
    refresh();
  });
  return form;
}

/** A readable error; a 401/403 from the API offers a form for the bearer key. */
export function errorBox(err) {
  const status = err && err.status;
  const title = err instanceof ApiError
    ? (status ? `${status} · ${err.error}` : String(err.error))
    : 'Something went wrong';
  const box = h('div', {class: 'error-box', role: 'alert'},
                h('strong', null, title),
                err && err.details ? h('p', null, String(err.details))
                  : !(err instanceof ApiError) ? h('p', null, String(err && err.message ? err.message : err)) : null);
  if (status === 401 || status === 403) {
    box.append(h('p', null, apiKey() ? 'The stored key was refused. Enter another:'
                                    : 'This results store needs an API key to read:'), keyForm());
    if (apiKey()) {
      box.append(h('button', {type: 'button', class: 'link-button', onclick: () => { setApiKey(''); refresh(); }},
                   'Forget the stored key'));
    }
  }
  return box;
}

/** Tabs kept in the URL: tabs({tabs:[{id, label}], current, onSelect}). */
export function tabs({tabs: items, current, onSelect}) {
  return h('div', {class: 'tabs', role: 'tablist'}, items.map((t) => h('button', {
    type: 'button', role: 'tab', class: 'tab', 'data-tab': t.id,
    'aria-selected': t.id === current ? 'true' : 'false',
    onclick: () => onSelect(t.id),
  }, t.label)));
}

// ------------------------------------------------------------------------------ formatting

/** A finite number (not NaN, not ±Infinity, not a numeric string). */
export function isNum(x) {
  return typeof x === 'number' && Number.isFinite(x);
}

/** The sum of an object's numeric values ({timeout: 2, retried: 1} -> 3). */
export function sumValues(obj) {
  return Object.values(obj || {}).reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0);
}

function toDate(value) {
  if (value === null || value === undefined || value === '') return null;
  const d = typeof value === 'number' ? new Date(value) : new Date(String(value));
  return Number.isNaN(d.getTime()) ? null : d;
}

const pad = (n) => String(n).padStart(2, '0');

export const fmt = {
  /** 0.834 -> '83.4%' */
  pct(x) {
    return isNum(x) ? `${(x * 100).toFixed(1).replace(/\.0$/, '')}%` : '—';
  },
  /** A score on its own scale, three decimals at most. */
  score(x) {
    if (!isNum(x)) return '—';
    return Math.abs(x) >= 100 ? x.toFixed(0) : String(Number(x.toFixed(3)));
  },
  /** Milliseconds, as ms, s, min or h. */
  ms(x) {
    if (!isNum(x)) return '—';
    const a = Math.abs(x);
    if (a < 1000) return `${Math.round(x)} ms`;
    if (a < 60_000) return `${(x / 1000).toFixed(a < 10_000 ? 2 : 1)} s`;
    if (a < 3_600_000) return `${Math.floor(x / 60_000)} min ${Math.round((x % 60_000) / 1000)} s`;
    return `${Math.floor(x / 3_600_000)} h ${Math.round((x % 3_600_000) / 60_000)} min`;
  },
  /** US dollars; null or undefined is 'unknown', never 0. */
  cost(x) {
    if (!isNum(x)) return 'unknown';
    if (x === 0) return '$0';
    const a = Math.abs(x);
    if (a < 0.01) return `$${x.toFixed(4)}`;
    if (a < 100) return `$${x.toFixed(2)}`;
    return `$${Math.round(x).toLocaleString('en-US')}`;
  },
  int(x) {
    return isNum(x) ? Math.round(x).toLocaleString('en-US') : '—';
  },
  /** 'YYYY-MM-DD HH:MM' in local time, from epoch ms or an ISO string. */
  date(value) {
    const d = toDate(value);
    if (!d) return '—';
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  },
  /** '3 min ago', '2 d ago' */
  ago(value) {
    const d = toDate(value);
    if (!d) return '—';
    const s = (Date.now() - d.getTime()) / 1000;
    if (s < 0) return 'just now';
    if (s < 60) return `${Math.round(s)} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    if (s < 86400 * 60) return `${Math.round(s / 86400)} d ago`;
    return fmt.date(d.getTime()).slice(0, 10);
  },
  /** A signed number: '+0.120' / '−0.050' (a minus sign, not a hyphen). */
  signed(x, format = fmt.score) {
    if (!isNum(x)) return '—';
    if (x === 0) return format(0);
    return (x > 0 ? '+' : '−') + format(Math.abs(x));
  },
  /** '[0.42, 0.61]' from a pair, or '' when either end is missing. */
  interval(low, high, format = fmt.score) {
    return isNum(low) && isNum(high) ? `[${format(low)}, ${format(high)}]` : '';
  },
  /** What was left out and why: 'another setting of the scenario: 24; retried: 2', or null. */
  excluded(counts) {
    const parts = Object.entries(counts || {}).filter(([, n]) => n).map(([why, n]) => `${why}: ${fmt.int(n)}`);
    return parts.length ? parts.join('; ') : null;
  },
};
