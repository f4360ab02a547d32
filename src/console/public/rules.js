// Rules view: every (scope, destination) rule document, an editor with check, diff against
// the live version, preview on a stored or pasted event, publish, and the version history
// with rollback.
import { api, ApiError, qs, report } from './api.js';
import { $, fill, fmtTime, h, pre } from './dom.js';

const AUTHOR = 'console';
let chosen = null; // {scope, destination}

export function init() {
  $('#rules-list').addEventListener('click', (e) => {
    const item = e.target.closest('.rules-item');
    if (item) void choose(item.dataset.scope, item.dataset.destination);
  });
  $('#rules-check').addEventListener('click', () => void check());
  $('#rules-diff').addEventListener('click', () => void diff());
  $('#rules-preview').addEventListener('click', () => void preview());
  $('#rules-publish').addEventListener('click', () => void publish());
}

export function show() {
  void loadList();
}

const path = (suffix = '') => `/admin/rules/${encodeURIComponent(chosen.destination)}${suffix}`;

async function loadList() {
  try {
    const r = (await api('/admin/rules')) ?? {};
    const errors = r.errors ?? [];
    fill($('#rules-summary'), r.valid === false || errors.length > 0
      ? h('span', { class: 'bad' }, `Rules have ${Array.isArray(errors) ? errors.length : errors} error(s)`)
      : 'All rules valid.');
    fill($('#rules-list'), (r.items ?? []).map((it) => h('li', {},
      h('button', {
        type: 'button',
        class: `rules-item${chosen && chosen.scope === it.scope && chosen.destination === it.destination ? ' selected' : ''}`,
        data: { scope: it.scope, destination: it.destination },
      },
      h('strong', {}, it.destination), ' ',
      h('span', { class: 'muted' }, it.scope), ' ',
      h('span', { class: `tag tag-${it.source}` }, it.source === 'store' ? `v${it.version}` : 'file'), ' ',
      h('span', { class: 'muted' }, `${it.rules ?? '?'} rules`)))));
  } catch (err) {
    report(err);
  }
}

function clearOutputs() {
  fill($('#rules-errors'));
  fill($('#rules-status'));
  fill($('#rules-diff-out'));
  fill($('#rules-preview-out'));
}

async function choose(scope, destination) {
  chosen = { scope, destination };
  for (const b of document.querySelectorAll('.rules-item')) {
    b.classList.toggle('selected', b.dataset.scope === scope && b.dataset.destination === destination);
  }
  clearOutputs();
  try {
    const r = await api(`${path()}${qs({ scope })}`);
    $('#rules-editor').value = JSON.stringify(r.document, null, 2);
    $('#rules-current').textContent = `${destination} · scope ${scope} · live: ${r.source === 'store' ? `version ${r.version}` : 'file'}`;
    for (const id of ['#rules-editor', '#rules-check', '#rules-diff', '#rules-preview', '#rules-publish']) $(id).disabled = false;
    await loadHistory();
  } catch (err) {
    report(err);
  }
}

async function loadHistory() {
  const { scope, destination } = chosen;
  try {
    const { items = [] } = (await api(`${path('/history')}${qs({ scope })}`)) ?? {};
    if (chosen?.scope !== scope || chosen?.destination !== destination) return;
    fill($('#rules-history'), items.length === 0
      ? h('tr', {}, h('td', { class: 'muted' }, 'No published versions: the file is live.'))
      : items.map((v) => h('tr', { class: `rules-history-row${v.live ? ' live' : ''}`, data: { version: v.version } },
        h('td', { class: 'num' }, `v${v.version}`),
        h('td', {}, v.action ?? ''),
        h('td', {}, v.author ?? ''),
        h('td', { class: 'wrap' }, v.message ?? ''),
        h('td', { class: 'nowrap' }, fmtTime(v.at)),
        h('td', {}, v.live
          ? h('span', { class: 'tag tag-live rules-live' }, 'live')
          : h('button', { type: 'button', class: 'rules-rollback', on: { click: () => rollback(v.version) } }, 'Roll back')))));
  } catch (err) {
    report(err);
  }
}

/** Line and column (1-based) of a JSON.parse error, from the engine's message. */
export function syntaxPosition(message, text) {
  const lc = /line (\d+) column (\d+)/i.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /position (\d+)/i.exec(message);
  const at = pos ? Number(pos[1]) : /end of (JSON|data) input/i.test(message) ? text.length : null;
  if (at === null) return null;
  const before = text.slice(0, at).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

/** Parses a textarea's JSON; a syntax error is listed in #rules-errors and null returned. */
function parse(text, what) {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const p = syntaxPosition(err.message, text);
    showErrors([`${what}: JSON syntax error${p ? ` at line ${p.line}, column ${p.column}` : ''}: ${err.message}`]);
    return null;
  }
}

/** Lists errors ({path, message} or strings) in #rules-errors. */
function showErrors(errors) {
  fill($('#rules-errors'), errors.map((e) => h('li', { class: 'rules-error' },
    typeof e === 'string' ? e : `${e.path === '' ? '/' : (e.path ?? '')}: ${e.message ?? JSON.stringify(e)}`)));
}

function draft() {
  clearOutputs();
  const doc = parse($('#rules-editor').value, 'rules');
  return doc && { scope: chosen.scope, document: doc.value };
}

async function check() {
  const body = draft();
  if (!body) return;
  try {
    const r = await api(path('/check'), { method: 'POST', body });
    if (r.ok && (r.errors ?? []).length === 0) fill($('#rules-status'), 'Check passed: no errors.');
    else showErrors(r.errors ?? []);
  } catch (err) {
    report(err);
  }
}

async function diff() {
  const body = draft();
  if (!body) return;
  try {
    const { changes = [] } = (await api(path('/diff'), { method: 'POST', body })) ?? {};
    fill($('#rules-diff-out'),
      h('h4', {}, changes.length === 0 ? 'No changes against the live version.' : `${changes.length} change(s) against the live version`),
      changes.map((c) => h('div', { class: `rules-change change-${c.change}`, data: { ruleId: c.id, change: c.change } },
        h('div', { class: 'change-head' }, h('strong', {}, c.id), ' ', h('span', { class: 'tag' }, c.change)),
        h('div', { class: 'pair' },
          h('div', {}, h('h5', {}, 'before'), c.before === null || c.before === undefined ? h('p', { class: 'muted' }, '—') : pre(c.before)),
          h('div', {}, h('h5', {}, 'after'), c.after === null || c.after === undefined ? h('p', { class: 'muted' }, '—') : pre(c.after))))));
  } catch (err) {
    report(err);
  }
}

async function preview() {
  const body = draft();
  if (!body) return;
  const eventId = $('#rules-preview-event').value.trim();
  const pasted = $('#rules-preview-payload').value.trim();
  if (eventId) body.event_id = eventId;
  else if (pasted) {
    const p = parse(pasted, 'payload');
    if (!p) return;
    body.payload = p.value;
  } else {
    showErrors(['Preview needs a stored event id or a pasted payload.']);
    return;
  }
  try {
    const r = (await api(path('/preview'), { method: 'POST', body })) ?? {};
    const before = r.before ?? [];
    const after = r.after ?? [];
    const ids = [...new Set([...before, ...after].map((d) => d.destination_id))];
    fill($('#rules-preview-out'),
      h('h4', {}, r.changed
        ? h('span', { class: 'rules-preview-changed bad' }, 'The draft changes what is sent.')
        : h('span', { class: 'rules-preview-same' }, 'The draft sends the same requests as the live rules.')),
      ids.length === 0 ? h('p', { class: 'muted' }, 'The account has no destination of this type.') : null,
      ids.map((id) => {
        const b = before.find((d) => d.destination_id === id);
        const a = after.find((d) => d.destination_id === id);
        const changed = JSON.stringify(b ?? null) !== JSON.stringify(a ?? null);
        const any = a ?? b;
        return h('div', { class: `rules-preview-dest${changed ? ' changed' : ''}`, data: { destinationId: id, changed: String(changed) } },
          h('div', { class: 'change-head' }, h('strong', {}, `${any.type} · ${any.name}`), ' ', h('span', { class: 'tag' }, changed ? 'changed' : 'same')),
          h('div', { class: 'pair' },
            h('div', { class: 'preview-before' }, h('h5', {}, 'live rules'), destPreview(b)),
            h('div', { class: 'preview-after' }, h('h5', {}, 'draft'), destPreview(a))));
      }));
  } catch (err) {
    report(err);
  }
}

function destPreview(d) {
  if (!d) return h('p', { class: 'muted' }, '—');
  if (d.status === 'skipped') return h('p', { class: 'warn' }, `skipped: ${d.reason ?? ''}${d.message ? ` — ${d.message}` : ''}`);
  return (d.requests ?? []).map((r) => pre({ method: r.method, url: r.url, headers: r.headers, body: r.body }));
}

async function publish() {
  const body = draft();
  if (!body) return;
  const { scope, destination } = chosen;
  try {
    const r = await api(path('/publish'), { method: 'POST', body: { ...body, message: $('#rules-message').value, author: AUTHOR } });
    await choose(scope, destination);
    fill($('#rules-status'), `published version ${r.version}`);
    $('#rules-message').value = '';
    await loadList();
  } catch (err) {
    if (err instanceof ApiError && err.status === 422) showErrors(err.details?.errors ?? [err.message]);
    else report(err);
  }
}

async function rollback(version) {
  const { scope, destination } = chosen;
  if (!confirm(`Make version ${version} of ${destination} (scope ${scope}) live again?`)) return;
  try {
    const r = await api(path('/rollback'), {
      method: 'POST',
      body: { scope, version, message: `rollback to version ${version} from the console`, author: AUTHOR },
    });
    await choose(scope, destination);
    fill($('#rules-status'), r?.version === undefined || r.version === version
      ? `rolled back: version ${version} is live`
      : `rolled back to version ${version}: live as version ${r.version}`);
    await loadList();
  } catch (err) {
    report(err);
  }
}
