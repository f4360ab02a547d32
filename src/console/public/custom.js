// Custom endpoints view: each loaded endpoint, its auth and rate limit, the accounts bound
// to its customer, its versions (state, sunset, pinned accounts, uses per account: who still
// sends an old shape), its examples, and a test run of a chosen version (env=test: nothing stored or sent).
import { api, report } from './api.js';
import { $, fill, h, pre } from './dom.js';

export function init() {}

export function show() {
  void load();
}

async function load() {
  const list = $('#custom-list');
  try {
    const { items = [] } = (await api('/admin/customers')) ?? {};
    fill(list, items.length === 0 ? h('p', { class: 'muted' }, 'No custom endpoints are loaded.') : items.map(row));
  } catch (err) {
    report(err);
  }
}

/** Auth as a short text: `api_key, ip_allow_list`, or `none`. */
function authText(auth) {
  if (auth === null || auth === undefined || (Array.isArray(auth) && auth.length === 0)) return 'none';
  if (typeof auth === 'string') return auth;
  if (Array.isArray(auth)) return auth.map((a) => (typeof a === 'string' ? a : (a?.type ?? JSON.stringify(a)))).join(', ');
  return auth.type ?? JSON.stringify(auth);
}

/** A rate limit as text: `production 6000/min (burst 300); test 1000/min`. */
function rateText(rate) {
  if (rate === null || rate === undefined) return 'service default';
  if (typeof rate !== 'object') return String(rate);
  const one = (r) => (r && typeof r === 'object' && 'per_minute' in r ? `${r.per_minute}/min${r.burst ? ` (burst ${r.burst})` : ''}` : JSON.stringify(r));
  if ('per_minute' in rate) return one(rate);
  return Object.entries(rate).map(([env, r]) => `${env} ${one(r)}`).join('; ');
}

/** One line per version: its state, sunset, pinned accounts and uses per account. */
function versionsTable(ep) {
  const versions = ep.versions ?? [];
  const uses = (v) => (v.usage ?? []).length === 0 ? 'none'
    : v.usage.map((u) => `${u.script_id} ${u.env}: ${u.uses} (last ${u.last_used_at.slice(0, 16).replace('T', ' ')})`).join('; ');
  return h('div', { class: 'scroll-x' }, h('table', { class: 'custom-versions' },
    h('thead', {}, h('tr', {}, ['version', 'state', 'sunset', 'pinned', 'uses'].map((c) => h('th', {}, c)))),
    h('tbody', {}, versions.map((v) => h('tr', { data: { version: String(v.version), state: v.state } },
      h('td', {}, String(v.version)),
      h('td', {}, v.state),
      h('td', {}, v.sunset ? v.sunset.slice(0, 10) : ''),
      h('td', {}, (v.pinned_accounts ?? []).join(', ')),
      h('td', {}, uses(v)))))));
}

function row(ep) {
  const accounts = ep.accounts ?? [];
  const versions = ep.versions ?? [];
  const version = h('select', { class: 'custom-version' }, versions.map((v) =>
    h('option', { value: String(v.version), selected: v.state === 'current' }, `${v.version} (${v.state})`)));
  const out = h('pre', { class: 'code custom-out', hidden: true });
  const select = h('select', { class: 'custom-account', disabled: accounts.length === 0 },
    accounts.length === 0 ? h('option', { value: '' }, 'no account bound') : accounts.map((a) => h('option', { value: a }, a)));
  const send = h('button', { type: 'button', class: 'custom-send primary', disabled: accounts.length === 0 }, 'Send test');
  send.addEventListener('click', async () => {
    send.disabled = true;
    out.hidden = false;
    out.textContent = 'sending…';
    try {
      const r = await api(`/admin/customers/${encodeURIComponent(ep.customer)}/endpoints/${encodeURIComponent(ep.endpoint)}/test`, {
        method: 'POST',
        body: versions.length > 0 ? { script_id: select.value, version: version.value } : { script_id: select.value },
      });
      out.textContent = JSON.stringify(r, null, 2);
      out.dataset.status = '200';
    } catch (err) {
      // The endpoint's own answer as it came (messages, error_code, error_context…), with its HTTP status.
      const answer = err.body && typeof err.body === 'object' ? err.body : { error: { code: err.code, message: err.message, details: err.details } };
      out.textContent = JSON.stringify({ http_status: err.status, ...answer }, null, 2);
      out.dataset.status = String(err.status ?? '');
      report(err);
    } finally {
      send.disabled = false;
    }
  });
  return h('section', { class: 'card custom-row', data: { customer: ep.customer, endpoint: ep.endpoint } },
    h('h3', {}, `${ep.customer} / ${ep.endpoint}`),
    h('dl', { class: 'facts' },
      h('dt', {}, 'auth'), h('dd', {}, authText(ep.auth)),
      h('dt', {}, 'rate limit'), h('dd', {}, rateText(ep.rate_limit)),
      h('dt', {}, 'accounts'), h('dd', {}, accounts.length ? accounts.join(', ') : 'none')),
    versionsTable(ep),
    h('details', {}, h('summary', {}, 'Example body (current version)'), ep.example === undefined || ep.example === null ? h('p', { class: 'muted' }, 'no example.json') : pre(ep.example)),
    h('div', { class: 'toolbar' }, h('label', {}, 'Account ', select), versions.length > 0 ? h('label', {}, 'Version ', version) : null, send),
    out);
}
