// Rules view: every (scope, destination) rule document, an editor with line numbers and
// check, diff against the live version (changed lines marked), preview on a stored or pasted
// event, publish, the version history with rollback, and revert to the file or plugin default.
import { api, ApiError, qs, report } from './api.js';
import { $, $$, fill, fmtTime, h, pre, pretty, revealIfBelow } from './dom.js';
import { jsonErrorOffset, lineColumn } from './json-position.js';
import { attachGutter } from './editor-gutter.js';
import { lineDiff } from './line-diff.js';
import { eventSummary } from './trace.js';

let chosen = null; // {scope, destination}
let liveVersion = null;
/** What serves the chosen file now: {source: 'store'|'file'|'plugin', file}. */
let liveSource = null;
let gutter = null;

export function init() {
  gutter = attachGutter($('#rules-editor'));
  $('#rules-list').addEventListener('click', (e) => {
    const item = e.target.closest('.rules-item');
    if (item) void choose(item.dataset.scope, item.dataset.destination);
  });
  $('#rules-check').addEventListener('click', () => void check());
  $('#rules-diff').addEventListener('click', () => void diff());
  $('#rules-preview').addEventListener('click', () => void preview());
  $('#rules-publish').addEventListener('click', () => void publish());
  $('#rules-replay').addEventListener('click', () => void replay());
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
      h('span', { class: `tag tag-${it.source}` }, it.source === 'store' ? `store v${it.version}` : it.source === 'plugin' ? `plugin default` : `file ${shortFile(it.file)}`), ' ',
      h('span', { class: 'muted' }, `${it.rules ?? '?'} rule${it.rules === 1 ? '' : 's'}`)))));
  } catch (err) {
    report(err);
  }
}

/** A rule file's path from the rules folder on (`rules/webhook.json`). */
function shortFile(file) {
  if (!file) return '';
  const parts = String(file).split(/[\\/]/);
  const at = parts.lastIndexOf('rules');
  return (at >= 0 ? parts.slice(at) : parts.slice(-2)).join('/');
}

function clearOutputs() {
  fill($('#rules-errors'));
  fill($('#rules-status'));
  fill($('#rules-diff-out'));
  fill($('#rules-preview-out'));
  fill($('#rules-replay-out'));
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
    gutter.refresh();
    liveVersion = r.source === 'store' ? r.version : null;
    liveSource = { source: r.source, file: r.file };
    fill($('#rules-current'), `${destination} · scope ${scope} · live: ${r.source === 'store' ? `store version ${r.version}` : r.source === 'plugin' ? 'plugin default' : `file ${shortFile(r.file)}`}`,
      r.source === 'store' ? [' ', h('button', { type: 'button', class: 'rules-revert', on: { click: () => revert() } }, 'Revert to file')] : null);
    if (scope !== 'default' && !$('#rules-preview-account').value) $('#rules-preview-account').value = scope;
    for (const id of ['#rules-editor', '#rules-check', '#rules-diff', '#rules-preview', '#rules-replay', '#rules-publish']) $(id).disabled = false;
    await loadHistory();
    revealIfBelow($('#rules-current'));
  } catch (err) {
    report(err);
  }
}

async function loadHistory() {
  const { scope, destination } = chosen;
  try {
    const { items = [] } = (await api(`${path('/history')}${qs({ scope })}`)) ?? {};
    if (chosen?.scope !== scope || chosen?.destination !== destination) return;
    // With no stored version live, what serves is named: the plugin default, or the file that holds the rules.
    const served = liveSource?.source === 'plugin' ? 'the plugin default' : liveSource?.source === 'file' ? `the file ${shortFile(liveSource.file)}` : null;
    const note = (text) => h('tr', { class: 'rules-history-now' }, h('td', { class: 'muted', colspan: '3' }, text));
    fill($('#rules-history'), items.length === 0
      ? note(served ? `No published versions: ${served} is live.` : 'No published versions.')
      : [served && !items.some((v) => v.live) ? note(`No published version is live: ${served} is.`) : null, items.map(historyRow)]);
  } catch (err) {
    report(err);
  }
}

/** One change in the history: the version it made live (or, a revert, the one it stopped), its message, and Roll back. */
function historyRow(v) {
  return h('tr', { class: `rules-history-row${v.live ? ' live' : ''}`, data: { version: v.version, change: v.change ?? '', action: v.action ?? '' } },
    v.action === 'revert'
      ? h('td', { class: 'nowrap' }, h('strong', {}, 'revert'), h('div', { class: 'muted' }, `from v${v.version}`))
      : h('td', { class: 'nowrap' }, h('strong', {}, `v${v.version}`), h('div', { class: 'muted' }, v.action ?? '')),
    h('td', { class: 'wrap' }, v.message ?? '', h('div', { class: 'muted' }, `${v.author ?? ''} · ${fmtTime(v.at)}`)),
    h('td', { class: 'nowrap' }, v.live ? h('span', { class: 'tag tag-live rules-live' }, 'live') : null,
      v.version === liveVersion ? null : h('button', { type: 'button', class: 'rules-rollback', on: { click: () => rollback(v.version) } }, 'Roll back')));
}

/** Parses a textarea's JSON; a syntax error is listed in #rules-errors and null returned. */
function parse(text, what) {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const at = jsonErrorOffset(text);
    const p = at === null ? null : lineColumn(text, at);
    showErrors([`${what}: JSON syntax error${p ? ` at line ${p.line}, column ${p.column}` : ''}: ${err.message}`]);
    if (p && what === 'rules') gutter.mark([p.line]);
    return null;
  }
}

/** Lists errors ({path, message, file?} or strings) in #rules-errors; `file` names another document the draft would break. */
function showErrors(errors) {
  fill($('#rules-errors'), errors.map((e) => h('li', { class: 'rules-error' },
    typeof e === 'string' ? e : `${e.file ? `${e.file}: ` : ''}${e.path === '' ? '/' : (e.path ?? '')}: ${e.message ?? JSON.stringify(e)}`)));
}

/** An API refusal: its errors (422 RULES_INVALID) or its message in #rules-errors; anything else in the toast. */
function refused(err) {
  if (err instanceof ApiError && err.status === 401) return;
  if (err instanceof ApiError && Array.isArray(err.details?.errors)) showErrors(err.details.errors);
  else if (err instanceof ApiError && err.status < 500) showErrors([`${err.message} (${err.code})`]);
  else report(err);
}

/** The editor's draft for the API, or null after listing a syntax error. `output`: the one result area this action replaces. */
function draft(output) {
  fill($('#rules-errors'));
  fill($('#rules-status'));
  if (output) fill($(output));
  const doc = parse($('#rules-editor').value, 'rules');
  return doc && { scope: chosen.scope, document: doc.value };
}

async function check() {
  const body = draft(null);
  if (!body) return;
  try {
    const r = await api(path('/check'), { method: 'POST', body });
    if (r.ok && (r.errors ?? []).length === 0) fill($('#rules-status'), 'Check passed: no errors.');
    else showErrors(r.errors ?? []);
  } catch (err) {
    refused(err);
  }
}

async function diff() {
  const body = draft('#rules-diff-out');
  if (!body) return;
  try {
    const { changes = [], against = null } = (await api(path('/diff'), { method: 'POST', body })) ?? {};
    const base = against === null ? 'no live rules' : against.source === 'store' ? `live store version ${against.version}` : against.source === 'plugin' ? 'the plugin default' : 'the live rule file';
    fill($('#rules-diff-out'),
      h('h4', {}, changes.length === 0 ? `No changes against ${base}.` : `${changes.length} change(s) against ${base}`),
      changes.map((c) => h('div', { class: `rules-change change-${c.change}`, data: { ruleId: c.id, change: c.change } },
        h('div', { class: 'change-head' }, h('strong', {}, c.id), ' ', h('span', { class: 'tag' }, c.change)),
        diffPair(c.before, c.after))));
    for (const pair of $$('#rules-diff-out .pair')) showChanges($$('pre.diff-lines', pair));
  } catch (err) {
    refused(err);
  }
}

/**
 * One rule before and after, side by side, each line that differs marked (removed before, added
 * after), a changed stretch facing the other side's (filler rows where one side has fewer lines).
 */
function diffPair(before, after) {
  const none = (v) => v === null || v === undefined;
  const { before: b, after: a, first } = lineDiff(none(before) ? '' : pretty(before), none(after) ? '' : pretty(after));
  const lines = (rows, mark) => h('pre', { class: 'code diff-lines', data: { first } }, rows.map((l) =>
    h('span', { class: l.filler ? 'diff-line diff-filler' : l.changed ? `diff-line ${mark}` : 'diff-line' }, `${l.text}\n`)));
  return h('div', { class: 'pair' },
    h('div', { class: 'diff-before' }, h('h5', {}, 'before'), none(before) ? h('p', { class: 'muted' }, '—') : lines(b, 'line-removed')),
    h('div', { class: 'diff-after' }, h('h5', {}, 'after'), none(after) ? h('p', { class: 'muted' }, '—') : lines(a, 'line-added')));
}

/** A diff's panes (on the page): opened at their first changed line, two lines above it showing, and scrolling together. */
function showChanges(panes) {
  for (const pane of panes) {
    const row = pane.children[Number(pane.dataset.first)];
    if (!row) continue;
    const at = row.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
    pane.scrollTop = Math.max(0, at - 2 * row.getBoundingClientRect().height);
  }
  if (panes.length > 1) scrollTogether(panes);
}

/**
 * Scrolling one pane scrolls the others to the same place. A pane moved from here ignores the
 * scroll event that move causes, so a pane that cannot go as far (less to scroll sideways)
 * never pulls the one the operator scrolls back.
 */
function scrollTogether(panes) {
  const moved = new WeakSet();
  for (const pane of panes) {
    pane.addEventListener('scroll', () => {
      if (moved.delete(pane)) return;
      for (const other of panes) {
        if (other === pane) continue;
        const [top, left] = [other.scrollTop, other.scrollLeft];
        other.scrollTop = pane.scrollTop;
        other.scrollLeft = pane.scrollLeft;
        if (other.scrollTop !== top || other.scrollLeft !== left) moved.add(other);
      }
    });
  }
}

async function preview() {
  const body = draft('#rules-preview-out');
  if (!body) return;
  const q = $('#rules-preview-event').value.trim();
  const pasted = $('#rules-preview-payload').value.trim();
  let event = null;
  if (q) {
    event = await storedEvent(q);
    if (!event) return;
    body.event_id = event.id;
  } else if (pasted) {
    const p = parse(pasted, 'payload');
    if (!p) return;
    body.payload = p.value;
    if ($('#rules-preview-account').value) body.script_id = $('#rules-preview-account').value;
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
      event
        ? h('p', { class: 'muted rules-preview-event' }, `${event.name ?? 'event'} ${event.event_id ?? ''} · tracklane id ${event.id} · account ${r.script_id ?? ''}`)
        : h('p', { class: 'muted' }, `account ${r.script_id ?? ''}`),
      r.note ? h('p', { class: 'warn rules-preview-note' }, r.note) : null,
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
    refused(err);
  }
}

/**
 * The accepted stored event `q` names — a tracklane id, an event.id or an order id, found as
 * Trace finds it — or null after saying why: nothing found, nothing accepted (only those are
 * previewed), or several (listed in the preview's place, one button each to preview it).
 */
async function storedEvent(q) {
  let items;
  try {
    ({ items = [] } = (await api(`/admin/trace${qs({ q })}`)) ?? {});
  } catch (err) {
    refused(err);
    return null;
  }
  const accepted = items.filter((it) => it.status === 'accepted');
  if (accepted.length === 1) return accepted[0];
  if (items.length === 0) showErrors([`No stored event for “${q}” (a tracklane id, event.id or order id).`]);
  else if (accepted.length === 0) {
    showErrors([`“${q}” names only ${[...new Set(items.map((it) => it.status))].join(' and ')} events: a preview needs an accepted one.`]);
  } else {
    fill($('#rules-preview-out'),
      h('p', { class: 'warn' }, `“${q}” names ${accepted.length} accepted events: choose the one to preview.`),
      h('div', { class: 'hits' }, accepted.map((it) => h('button', {
        type: 'button', class: 'trace-hit rules-preview-pick', data: { id: it.id },
        on: { click: () => { $('#rules-preview-event').value = it.id; void preview(); } },
      }, eventSummary(it)))));
  }
  return null;
}

/** Replay through the draft: the last N stored events planned with the live rules and with the draft. */
async function replay() {
  const body = draft('#rules-replay-out');
  if (!body) return;
  body.last = Number($('#rules-replay-last').value) || 100;
  try {
    const r = (await api(path('/replay'), { method: 'POST', body })) ?? {};
    fill($('#rules-replay-out'),
      h('h4', { class: 'rules-replay-summary', data: { eventsChanged: String(r.events_changed ?? 0) } },
        `${r.events_changed ?? 0} of ${r.events ?? 0} event(s) would be sent differently ` +
        `(${r.destinations_changed ?? 0} destination request set(s) changed; ${r.requests_before ?? 0} → ${r.requests_after ?? 0} native requests; ` +
        `${r.considered ?? 0} stored event(s) read, the others have no destination of this type).`),
      (r.samples ?? []).length === 0 ? null : h('ul', { class: 'rules-replay-samples' },
        r.samples.map((x) => h('li', {}, `${x.name ?? '?'} ${x.event_id ?? ''} · ${x.destination_id} · tracklane id ${x.id}`))));
  } catch (err) {
    refused(err);
  }
}

function destPreview(d) {
  if (!d) return h('p', { class: 'muted' }, '—');
  if (d.status === 'skipped') return h('p', { class: 'warn' }, `skipped: ${d.reason ?? ''}${d.message ? ` — ${d.message}` : ''}`);
  return (d.requests ?? []).map((r) => pre({ method: r.method, url: r.url, headers: r.headers, body: r.body }));
}

async function publish() {
  const body = draft(null);
  if (!body) return;
  const { scope, destination } = chosen;
  const message = $('#rules-message').value.trim();
  if (!message) {
    showErrors(['Publishing needs a message: say what the change does.']);
    $('#rules-message').focus();
    return;
  }
  try {
    const r = await api(path('/publish'), { method: 'POST', body: { ...body, message } });
    await choose(scope, destination);
    fill($('#rules-status'), `published version ${r.version}`);
    $('#rules-message').value = '';
    await loadList();
  } catch (err) {
    refused(err);
  }
}

async function rollback(version) {
  const { scope, destination } = chosen;
  if (!confirm(`Make version ${version} of ${destination} (scope ${scope}) live again?`)) return;
  try {
    const r = await api(path('/rollback'), {
      method: 'POST',
      body: { scope, version, message: `rollback to version ${version} from the console` },
    });
    await choose(scope, destination);
    fill($('#rules-status'), r?.version === undefined || r.version === version
      ? `rolled back: version ${version} is live`
      : `rolled back to version ${version}: live as version ${r.version}`);
    await loadList();
  } catch (err) {
    refused(err);
  }
}

/** No published version live for the chosen scope any more: its rule file or plugin default serves again. */
async function revert() {
  const { scope, destination } = chosen;
  if (!confirm(`Revert ${destination} (scope ${scope}) to its rule file or plugin default? Version ${liveVersion} stops being live; it stays in the history to roll back to.`)) return;
  try {
    const r = await api(path('/revert'), { method: 'POST', body: { scope, message: 'revert to the file from the console' } });
    await choose(scope, destination);
    fill($('#rules-status'), r?.source === 'plugin' ? 'reverted: the plugin default is live'
      : r?.source === 'file' ? `reverted: the file ${shortFile(r.file)} is live` : 'reverted: the defaults apply');
    await loadList();
  } catch (err) {
    refused(err);
  }
}
