// Filter forms kept in the URL: the form itself, the query read back into its values, the
// fields and choices the ranking pages share, the recent batches offered as suggestions, and
// the checks of a filter made before asking the API (shown like an API error).

import {h, api, errorBox} from './core.js';

/** The query as a plain object of the given keys ('' for absent ones). */
export function queryValues(query, keys) {
  const out = {};
  for (const k of keys) out[k] = query.get(k) || '';
  return out;
}

/** The "since" filter as the API reads it: 30d, 12h, 90m or an ISO date. */
export function sinceProblem(text) {
  if (!text) return null;
  const t = String(text).trim();
  if (/^\d+\s*[dhm]$/.test(t)) return null;
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(t) && !Number.isNaN(Date.parse(t.replace(' ', 'T')))) {
    return null;
  }
  return `since=${t}: expected e.g. 30d, 12h, 90m or a date (2026-01-31)`;
}

export const BY_CHOICES = ['agent', 'model', 'specialist', 'agent,model', 'agent,specialist', 'model,specialist',
                           'agent,model,specialist'];
/** The choices of a "by" select: 'agent,model' shown as 'agent + model'. */
export const BY_OPTIONS = BY_CHOICES.map((b) => ({value: b, label: b.replace(/,/g, ' + ')}));

/** The "by" filter: agent, model, specialist or a comma-separated combination. */
export function byProblem(text) {
  if (!text) return null;
  const dims = String(text).split(',').map((d) => d.trim()).filter(Boolean);
  const bad = dims.filter((d) => !['agent', 'model', 'specialist'].includes(d));
  if (!dims.length || bad.length) return `by=${text}: dimensions are agent, model, specialist (comma-separated)`;
  return null;
}

/** A problem found before asking the API, shown like an API error. */
export function filterError(message) {
  return errorBox({status: 400, error: 'invalid filter', details: message, message});
}

/** Recent batches (newest first) whose ids the forms suggest; [] when the list cannot be read. */
export async function recentBatches(limit = 100) {
  try {
    const {data} = await api('/batches', {limit});
    return Array.isArray(data) ? data : [];
  } catch {
    return [];
  }
}

/** The scope fields shared by the ranking pages: suite or dataset, batch (with the recent ones
 *  offered) and since. */
export function scopeFields(batches) {
  return [
    {name: 'suite', label: 'Suite or dataset', placeholder: 'any', width: '11em'},
    {name: 'batchId', label: 'Batch', placeholder: 'any', width: '16em', suggestions: batches.map((b) => b.batchId)},
    {name: 'since', label: 'Since', placeholder: '30d, 12h or 2026-01-31', width: '13em',
     suggestions: ['24h', '7d', '30d', '90d']},
  ];
}

let idCounter = 0;

/**
 * A filter form kept in the URL. fields: [{name, label, type: 'text'|'select'|'search',
 * options: [{value, label}] | [string], placeholder, suggestions: [string], width}].
 * onSubmit(values) receives every field's trimmed value ('' when empty).
 */
export function filterForm({fields, values, onSubmit, submitLabel = 'Apply', onReset, name}) {
  const inputs = {};
  const form = h('form', {class: 'filters', 'aria-label': name || 'filters', 'data-form': name || 'filters'});
  for (const f of fields) {
    const current = values[f.name] === undefined || values[f.name] === null ? '' : String(values[f.name]);
    let input;
    if (f.type === 'select') {
      const opts = (f.options || []).map((o) => (typeof o === 'object' ? o : {value: o, label: o}));
      if (current && !opts.some((o) => o.value === current)) opts.push({value: current, label: current});
      input = h('select', {name: f.name},
                opts.map((o) => h('option', {value: o.value, selected: o.value === current}, o.label)));
    } else {
      const listId = f.suggestions && f.suggestions.length ? `dl-${f.name}-${++idCounter}` : null;
      input = h('input', {type: f.type || 'text', name: f.name, value: current, placeholder: f.placeholder || null,
                          list: listId, autocomplete: 'off', spellcheck: 'false',
                          style: f.width ? {width: f.width} : null});
      if (listId) {
        form.append(h('datalist', {id: listId}, f.suggestions.map((s) => h('option', {value: s}))));
      }
    }
    inputs[f.name] = input;
    form.append(h('label', null, f.label, input));
  }
  form.append(h('button', {type: 'submit', class: 'primary'}, submitLabel));
  if (onReset) {
    form.append(h('button', {type: 'button', class: 'reset', onclick: onReset}, 'Clear'));
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const out = {};
    for (const [k, input] of Object.entries(inputs)) out[k] = String(input.value || '').trim();
    onSubmit(out);
  });
  return form;
}
