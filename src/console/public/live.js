// Live view: GET /admin/stream read with fetch (so the bearer header goes along), newest
// event on top, at most MAX_ROWS kept; filters re-open the stream; pause holds new rows.
import { api, openStream, qs, readEvents, report } from './api.js';
import { $, $$, count, fill, fmtTime, h, issueList, pre, revealIfBelow } from './dom.js';
import { accountLabel, onAccounts } from './accounts.js';

const MAX_ROWS = 500;
const PRELOAD = 100;

let app;
let running = false;
let generation = 0;
let controller = null;
/** Shown rows, newest first: {item, tr}. */
let rows = [];
const byId = new Map();
/** Arrived since the last render, and held while paused. */
let incoming = [];
let held = [];
let heldCount = 0;
let paused = false;
let flushTimer = null;
let selectedId = null;

export function init(ctx) {
  app = ctx;
  const refilter = () => restart(false);
  for (const id of ['#live-filter-account', '#live-filter-status', '#live-filter-name']) $(id).addEventListener('change', refilter);
  let typing;
  $('#live-filter-name').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(refilter, 500);
  });
  $('#live-pause').addEventListener('click', () => setPaused(!paused));
  // Rows drawn before the account names arrived get them now.
  onAccounts(() => {
    for (const td of $$('#live-list .live-account')) fill(td, accountLabel(td.dataset.scriptId));
  });
  $('#live-list').addEventListener('click', (e) => {
    const tr = e.target.closest('.live-row');
    if (tr) select(tr.dataset.id);
  });
}

export function start() {
  if (running) return;
  running = true;
  restart(true);
}

export function stop() {
  running = false;
  generation++;
  controller?.abort();
  controller = null;
  setState('closed', 'disconnected');
}

function filters() {
  return {
    script_id: $('#live-filter-account').value,
    status: $('#live-filter-status').value,
    name: $('#live-filter-name').value.trim(),
  };
}

let openFilters = '';

/** (Re)opens the stream for the current filters, with an empty list; `force`: even if they did not change. */
function restart(force) {
  if (!running) return;
  const key = JSON.stringify(filters());
  if (!force && key === openFilters) return;
  openFilters = key;
  // The side panel never shows an event the list now leaves out.
  const chosen = selectedId === null ? undefined : byId.get(selectedId)?.item;
  if (selectedId !== null && !(chosen && matches(chosen, filters()))) closeDetail();
  const gen = ++generation;
  controller?.abort();
  controller = new AbortController();
  rows = [];
  byId.clear();
  incoming = [];
  held = [];
  heldCount = 0;
  $('#live-list').replaceChildren();
  $('#live-notice').hidden = true;
  showPending();
  void loop(gen, controller.signal);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Reads the stream until it ends, then reconnects with backoff (1 s doubling to 30 s). */
async function loop(gen, signal) {
  let delay = 1000;
  while (gen === generation) {
    setState('connecting', 'connecting…');
    try {
      const f = filters();
      const res = await openStream(`/admin/stream${qs(f)}`, signal);
      setState('open', 'live');
      delay = 1000;
      // What arrived before (or while reconnecting) fills the list; the stream carries the rest.
      void preload(gen, f);
      await readEvents(res, (m) => {
        if (gen === generation) onMessage(m);
      });
      if (gen !== generation) return;
      setState('closed', 'stream ended, reconnecting…');
    } catch (err) {
      if (gen !== generation || err?.name === 'AbortError') return;
      if (err?.status === 401) return;
      setState('closed', `disconnected (${err?.message ?? err}), retrying…`);
    }
    await sleep(delay + Math.random() * 250);
    delay = Math.min(delay * 2, 30_000);
  }
}

async function preload(gen, f) {
  try {
    const page = await api(`/admin/events${qs({ ...f, limit: PRELOAD })}`);
    if (gen !== generation) return;
    add(page?.items ?? [], false);
  } catch (err) {
    report(err);
  }
}

/** The stream's filters as the server applies them (exact account, status and name). */
function matches(item, f) {
  return (!f.script_id || item.script_id === f.script_id) && (!f.status || item.status === f.status) && (!f.name || item.name === f.name);
}

function closeDetail() {
  $('#live-detail').hidden = true;
  selectedId = null;
  for (const r of rows) r.tr.classList.remove('selected');
}

function setState(state, text) {
  const el = $('#live-state');
  el.dataset.state = state;
  el.textContent = text;
}

function onMessage(m) {
  if (m.event === 'overflow') {
    let missed = m.data;
    try {
      const v = JSON.parse(m.data);
      missed = typeof v === 'number' ? v : (v?.missed ?? v?.count ?? v?.dropped ?? Object.values(v ?? {}).find((x) => typeof x === 'number') ?? m.data);
    } catch {
      // keep the raw text
    }
    const el = $('#live-notice');
    el.textContent = `This console fell behind the stream: ${missed} event(s) were not shown. Use Trace or the filters to find them.`;
    el.hidden = false;
    return;
  }
  if (m.event !== 'intake') return;
  let item;
  try {
    item = JSON.parse(m.data);
  } catch {
    return;
  }
  if (paused) {
    held.push(item);
    heldCount++;
    if (held.length > MAX_ROWS) held.shift();
    showPending();
    return;
  }
  incoming.push(item);
  if (incoming.length > MAX_ROWS) incoming.shift();
  flushTimer ??= setTimeout(flush, 50);
}

function flush() {
  flushTimer = null;
  const batch = incoming;
  incoming = [];
  add(batch, true);
}

function setPaused(p) {
  paused = p;
  const b = $('#live-pause');
  b.setAttribute('aria-pressed', String(p));
  b.textContent = p ? 'Resume' : 'Pause';
  if (!p) {
    const batch = held;
    held = [];
    heldCount = 0;
    add(batch, true);
  }
  showPending();
}

function showPending() {
  const el = $('#live-pending');
  el.hidden = !paused || heldCount === 0;
  el.textContent = `${heldCount} new`;
}

const newer = (a, b) => Number(b.received_at ?? 0) - Number(a.received_at ?? 0);

/** Adds items (skipping ids already shown); `fresh`: they came from the stream. */
function add(items, fresh) {
  const tbody = $('#live-list');
  const added = items.filter((i) => i && i.id !== undefined && !byId.has(i.id));
  if (added.length === 0) return;
  const made = added.map((item) => ({ item, tr: rowFor(item, fresh) }));
  for (const r of made) byId.set(r.item.id, r);
  const top = rows[0]?.item;
  const inOrder = fresh && (!top || made.every((r) => newer(r.item, top) <= 0));
  made.sort((a, b) => newer(a.item, b.item));
  if (inOrder) {
    rows = [...made, ...rows];
    tbody.prepend(...made.map((r) => r.tr));
  } else {
    rows = [...rows, ...made].sort((a, b) => newer(a.item, b.item));
    tbody.replaceChildren(...rows.map((r) => r.tr));
  }
  while (rows.length > MAX_ROWS) {
    const gone = rows.pop();
    byId.delete(gone.item.id);
    gone.tr.remove();
  }
}

function rowFor(item, fresh) {
  return h('tr', {
    class: `live-row${fresh ? ' fresh' : ''}${item.id === selectedId ? ' selected' : ''}`,
    data: { id: item.id, eventId: item.event_id ?? '', status: item.status ?? '' },
    tabindex: '0',
  },
  // Class names place the cells of a narrow screen's card (console.css): status first; the counts keep their label.
  h('td', { class: 'nowrap live-time' }, fmtTime(item.received_at)),
  h('td', { class: 'live-account', data: { scriptId: item.script_id ?? '' } }, accountLabel(item.script_id)),
  h('td', { class: 'live-name' }, item.name ?? ''),
  h('td', { class: 'mono live-event-id' }, item.event_id ?? ''),
  h('td', { class: 'live-source', title: 'the intake endpoint: event, standard or custom:<endpoint>' }, item.source ?? ''),
  h('td', { class: 'live-status' }, h('span', { class: `status status-${item.status}` }, item.status ?? '')),
  h('td', { class: 'mono bad live-first-error' }, firstErrorCode(item)),
  h('td', { class: 'num live-count live-error-count', data: { label: 'err' } }, String(item.error_count ?? count(item.errors))),
  h('td', { class: 'num live-count live-warning-count', data: { label: 'warn' } }, String(item.warning_count ?? count(item.warnings))));
}

/**
 * The first error's code ('' for none), for a row: what to look at before opening it. A
 * listed event carries counts and this code; a streamed one its issues.
 */
function firstErrorCode(item) {
  if (item.first_error_code !== undefined) return item.first_error_code ?? '';
  const first = Array.isArray(item.errors) ? item.errors[0] : undefined;
  if (first === undefined) return '';
  return typeof first === 'string' ? first.split(':')[0] : String(first?.code ?? '');
}

/** What the stored payload is: intake keeps the normalised event of an accepted one, the body as received otherwise. */
function payloadLabel(ev) {
  if (ev.payload === null || ev.payload === undefined) {
    return [h('h4', { class: 'live-payload-label' }, 'Body as received'), h('p', { class: 'muted live-payload-note' }, 'not kept: it broke a size or shape limit')];
  }
  if (ev.status === 'rejected') {
    return [h('h4', { class: 'live-payload-label' }, 'Body as received'), h('p', { class: 'muted live-payload-note' }, 'rejected, so not normalised: stored as it came')];
  }
  return [h('h4', { class: 'live-payload-label' }, 'Normalised event'),
    h('p', { class: 'muted live-payload-note' }, 'as validated and stored (defaults applied); the body as received is not kept for accepted events')];
}

async function select(id) {
  selectedId = id;
  for (const r of rows) r.tr.classList.toggle('selected', r.item.id === id);
  const item = byId.get(id)?.item ?? { id };
  const panel = $('#live-detail');
  panel.hidden = false;
  const body = h('div', { class: 'muted' }, 'loading the stored event…');
  fill(panel,
    h('div', { class: 'detail-head' },
      h('h3', {}, `${item.name ?? 'event'} `, h('span', { class: `status status-${item.status}` }, item.status ?? '')),
      h('button', { type: 'button', class: 'live-trace link', on: { click: () => app.go('trace', id) } }, 'Trace →'),
      h('button', { type: 'button', class: 'quiet', on: { click: closeDetail } }, '×')),
    h('dl', { class: 'facts' },
      h('dt', {}, 'tracklane id'), h('dd', { class: 'mono' }, id),
      h('dt', {}, 'event id'), h('dd', { class: 'mono' }, item.event_id ?? '—'),
      h('dt', {}, 'account'), h('dd', {}, accountLabel(item.script_id)),
      h('dt', {}, 'intake'), h('dd', {}, item.source ?? ''),
      h('dt', {}, 'received'), h('dd', {}, fmtTime(item.received_at))),
    body);
  await loadDetail(id, body, false);
  // Once filled: before, the page may not be tall enough to scroll the panel up.
  if (selectedId === id) revealIfBelow(panel);
}

/** The stored event into `body`: identifiers masked, or (`reveal`, a request the server logs) in clear. */
async function loadDetail(id, body, reveal) {
  try {
    const detail = await api(`/admin/events/${encodeURIComponent(id)}${reveal ? qs({ reveal: 'identifiers' }) : ''}`);
    if (selectedId !== id) return;
    const ev = detail?.event ?? {};
    const deliveries = detail?.deliveries ?? [];
    fill(body,
      detail?.identifiers === 'masked'
        ? h('p', { class: 'identifiers-state muted', data: { state: 'masked' } }, 'The user\'s data (all but ids, country and order counts) and any e-mail address are masked. ',
          h('button', { type: 'button', class: 'live-reveal', on: { click: () => loadDetail(id, body, true) } }, 'Reveal identifiers'))
        : detail?.identifiers === 'revealed'
          ? h('p', { class: 'identifiers-state warn', data: { state: 'revealed' } }, 'Identifiers shown in clear (this look was logged).')
          : null,
      // The issues come with the event's detail: lists carry only their counts.
      issueList('Errors', ev.errors, 'live-errors'),
      issueList('Warnings', ev.warnings, 'live-warnings'),
      payloadLabel(ev),
      pre(ev.payload ?? null, 'code live-payload'),
      h('h4', {}, `Deliveries (${deliveries.length})`),
      deliveries.length === 0 ? h('p', { class: 'muted' }, 'none yet') : h('ul', { class: 'plain' }, deliveries.map((d) =>
        h('li', {}, `${d.destination_type} · ${d.destination_name} — `, h('span', { class: `status status-${d.status}` }, d.status)))));
    body.className = '';
  } catch (err) {
    if (selectedId === id) fill(body, `Could not load the event: ${err?.message ?? err}`);
    report(err);
  }
}
