// Trace view: find an event by tracklane id, event.id or order id; show the stored event,
// each delivery's native request and attempts, replay a failed (or, forced, a delivered) one,
// and act on its destination (retry now, pause/enable, resume: delivery-actions.js).
import { api, qs, report, toast } from './api.js';
import { $, fill, fmtTime, h, issueList, pre, table } from './dom.js';
import { actionButtons } from './delivery-actions.js';

const REFRESH_MS = 1000;
const MAX_REFRESHES = 120;

let app;
let shownId = null;
let loadSeq = 0;
let refreshTimer = null;
let refreshes = 0;

export function init(ctx) {
  app = ctx;
  $('#trace-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void search($('#trace-q').value.trim());
  });
  $('#trace-results').addEventListener('click', (e) => {
    const hit = e.target.closest('.trace-hit');
    if (hit) void load(hit.dataset.id, true);
  });
}

/** `q`: look this up at once (from the live view's Trace link). */
export function show(q) {
  if (typeof q === 'string' && q !== '') {
    $('#trace-q').value = q;
    void search(q);
  }
}

export function stop() {
  clearTimeout(refreshTimer);
  shownId = null;
}

async function search(q) {
  const results = $('#trace-results');
  if (!q) return;
  stop();
  fill($('#trace-detail'));
  fill(results, h('p', { class: 'muted' }, 'searching…'));
  try {
    const { items = [] } = (await api(`/admin/trace${qs({ q })}`)) ?? {};
    if (items.length === 0) {
      fill(results, h('p', { class: 'muted' }, `No event found for “${q}”.`));
      return;
    }
    fill(results, h('div', { class: 'hits' },
      h('p', { class: 'muted' }, `${items.length} event(s), newest first`),
      items.map((it) => h('button', { type: 'button', class: 'trace-hit', data: { id: it.id } }, eventSummary(it)))));
    if (items.length === 1) await load(items[0].id, true);
  } catch (err) {
    fill(results);
    report(err);
  }
}

/** A found event on one line (a Trace hit, a preview's choice): when, account, name, event id, status. */
export function eventSummary(it) {
  return [
    h('span', { class: 'nowrap' }, fmtTime(it.received_at)), ' ',
    h('span', {}, it.script_id ?? ''), ' ',
    h('strong', {}, it.name ?? ''), ' ',
    h('span', { class: 'mono' }, it.event_id ?? '—'), ' ',
    h('span', { class: `status status-${it.status}` }, it.status ?? ''),
  ];
}

/** Loads one event's trace; keeps refreshing while deliveries are still to come. */
async function load(id, fresh, reveal = false) {
  clearTimeout(refreshTimer);
  if (fresh) refreshes = 0;
  shownId = id;
  const seq = ++loadSeq;
  for (const b of document.querySelectorAll('.trace-hit')) b.classList.toggle('selected', b.dataset.id === id);
  try {
    const detail = await api(`/admin/events/${encodeURIComponent(id)}${reveal ? qs({ reveal: 'identifiers' }) : ''}`);
    if (seq !== loadSeq) return;
    render(detail);
    // A reveal is one logged look: refreshing would log it again, or mask it again.
    if (reveal) return;
    const deliveries = detail?.deliveries ?? [];
    const waiting = deliveries.length === 0 || deliveries.some((d) => d.status === 'pending');
    // Deliveries are matched by event.id: an event without one never shows any, so no polling.
    const matchable = detail?.event?.status === 'accepted' && detail?.event?.event_id !== null && detail?.event?.event_id !== undefined;
    if (waiting && matchable && refreshes++ < MAX_REFRESHES) {
      refreshTimer = setTimeout(() => {
        if (shownId === id && app.current() === 'trace') void load(id, false);
      }, REFRESH_MS);
    }
  } catch (err) {
    report(err);
  }
}

function render(detail) {
  const ev = detail?.event ?? {};
  const deliveries = detail?.deliveries ?? [];
  fill($('#trace-detail'), h('div', { class: 'trace-grid' },
    h('section', { class: 'card trace-event', data: { id: ev.id } },
      h('h3', {}, `${ev.name ?? 'event'} `, h('span', { class: `status status-${ev.status}` }, ev.status ?? '')),
      identifiersBar(detail),
      h('dl', { class: 'facts' },
        h('dt', {}, 'tracklane id'), h('dd', { class: 'mono' }, ev.id ?? ''),
        h('dt', {}, 'event id'), h('dd', { class: 'mono' }, ev.event_id ?? '—'),
        h('dt', {}, 'account'), h('dd', {}, ev.script_id ?? ''),
        h('dt', {}, 'source'), h('dd', {}, ev.source ?? ''),
        h('dt', {}, 'received'), h('dd', {}, fmtTime(ev.received_at))),
      issueList('Errors', ev.errors, 'trace-errors'),
      issueList('Warnings', ev.warnings, 'trace-warnings'),
      h('details', { open: true }, h('summary', {}, 'Stored payload'), pre(ev.payload ?? null, 'code trace-payload'))),
    h('section', { class: 'trace-deliveries' },
      h('h3', {}, `Deliveries (${deliveries.length})`),
      deliveries.length === 0 ? h('p', { class: 'muted' }, noDeliveries(ev)) : null,
      deliveries.map(deliveryCard))));
}

/** Identifiers come masked; revealing them is one request the server logs with this token's name. */
function identifiersBar(detail) {
  const id = detail?.event?.id;
  if (detail?.identifiers === 'revealed') {
    return h('p', { class: 'identifiers-state warn', data: { state: 'revealed' } }, 'Identifiers shown in clear (this look was logged). ',
      h('button', { type: 'button', class: 'trace-mask link', on: { click: () => load(id, true) } }, 'Mask again'));
  }
  if (detail?.identifiers !== 'masked') return null;
  return h('p', { class: 'identifiers-state muted', data: { state: 'masked' } }, 'The user\'s data (all but ids, country and order counts) and any e-mail address are masked. ',
    h('button', { type: 'button', class: 'trace-reveal', on: { click: () => load(id, true, true) } }, 'Reveal identifiers'));
}

function noDeliveries(ev) {
  if (ev.status !== 'accepted') return 'Only accepted events are delivered.';
  if (ev.event_id === null || ev.event_id === undefined) return 'No deliveries are listed for an event without event.id.';
  return 'No delivery yet (fan-out pending); this view refreshes.';
}

function deliveryCard(d) {
  const attempts = d.attempt_log ?? [];
  return h('section', { class: 'card trace-delivery', data: { deliveryId: d.id, destinationId: d.destination_id ?? '' } },
    h('div', { class: 'detail-head' },
      h('h4', {}, `${d.destination_type ?? ''} · ${d.destination_name ?? ''} `,
        h('span', { class: `status trace-status status-${d.status}`, data: { status: d.status } }, d.status ?? '')),
      replayButton(d)),
    d.destination_enabled === null || d.destination_enabled === undefined ? null : h('div', { class: 'toolbar trace-actions' },
      h('span', { class: 'muted' }, 'destination:'),
      actionButtons({
        id: d.destination_id, type: d.destination_type, name: d.destination_name, enabled: d.destination_enabled, paused: d.paused === true,
        pending: d.status === 'pending' ? 1 : 0, failedOrDead: 0,
      }, () => (shownId ? load(shownId, true) : undefined))),
    h('dl', { class: 'facts' },
      h('dt', {}, 'delivery'), h('dd', { class: 'mono' }, d.id),
      // A failed delivery may carry a reason too (build_failed, mapping_failed: its event's mapping kept killing the delivery thread).
      d.skip_reason ? [h('dt', {}, d.status === 'skipped' ? 'skipped' : 'reason'), h('dd', { class: 'warn' }, String(d.skip_reason))] : null,
      h('dt', {}, 'attempts'), h('dd', {}, String(d.attempts ?? attempts.length)),
      d.next_attempt_at ? [h('dt', {}, 'next attempt'), h('dd', {}, fmtTime(d.next_attempt_at))] : null,
      h('dt', {}, 'updated'), h('dd', {}, fmtTime(d.updated_at)),
      d.last_error ? [h('dt', {}, 'last error'), h('dd', { class: 'bad' }, String(d.last_error))] : null),
    requestHeading(d, attempts),
    d.request === null || d.request === undefined
      ? h('p', { class: 'muted trace-request' }, 'nothing was sent, and it cannot be rebuilt from the stored event')
      : [sentDigest(d), pre(d.request.map(({ body_bytes, body_sha256, body_truncated, body_source, ...r }) => r), 'code trace-request')],
    h('h5', {}, `Attempts (${attempts.length})`),
    // The attempts table is wider than a phone: it scrolls inside its own box.
    attempts.length === 0 ? h('p', { class: 'muted' }, 'none yet') : h('div', { class: 'scroll-x' }, table(
      ['#', 'time', 'status', 'latency', 'outcome', 'error', 'response'],
      attempts.map((a) => h('tr', { class: 'trace-attempt', data: { attempt: a.attempt, outcome: a.outcome ?? '' } },
        h('td', { class: 'num' }, String(a.attempt ?? '')),
        h('td', { class: 'nowrap' }, fmtTime(a.at)),
        h('td', { class: 'num' }, a.status_code === null || a.status_code === undefined ? '—' : String(a.status_code)),
        h('td', { class: 'num' }, a.latency_ms === null || a.latency_ms === undefined ? '' : `${a.latency_ms} ms`),
        h('td', {}, a.outcome ?? ''),
        h('td', { class: a.outcome === 'success' ? 'muted' : 'bad' }, a.error ?? ''),
        h('td', {}, a.response === null || a.response === undefined || a.response === '' ? '' : pre(a.response, 'code small')))))));
}

/** Says whether the request shown is the one an attempt sent or one rebuilt now (no attempt kept one). */
function requestHeading(d, attempts) {
  if (d.request_source === 'sent') {
    const n = [...attempts].reverse().find((a) => a.request)?.attempt;
    return h('h5', { class: 'trace-request-source', data: { source: 'sent' } }, `Native request as sent${n ? ` by attempt ${n}` : ''} (secrets masked)`);
  }
  return h('h5', { class: 'trace-request-source', data: { source: 'rebuilt' } }, 'Native request rebuilt now: no attempt kept what it sent (secrets masked)');
}

/** What a successful attempt's body shown is: it keeps only the digest, and the body is mapped again from the event. */
const BODY_SOURCE = {
  rebuilt: 'body mapped again from the stored event; its SHA-256 equals the one sent',
  rebuilt_differs: 'body mapped again from the stored event, but rules or settings changed since: NOT what was sent (its digest differs)',
  rebuilt_alone: 'this event\'s part of the body, mapped again from the stored event (the request carried other events too)',
  digest_only: 'the body was not kept (the attempt succeeded) and cannot be mapped again',
};

function sentDigest(d) {
  const r = d.request_source === 'sent' ? d.request?.[0] : null;
  if (!r) return null;
  const source = BODY_SOURCE[r.body_source];
  return h('p', { class: 'muted trace-request-digest', data: { bodySource: r.body_source ?? 'sent' } },
    `body ${r.body_bytes} bytes, sha256 ${r.body_sha256}${r.body_truncated ? ' (the first 16 KiB shown)' : ''}${source ? `; ${source}` : ''}`);
}

function replayButton(d) {
  if (d.status === 'failed' || d.status === 'dead') {
    return h('button', { type: 'button', class: 'trace-replay primary', on: { click: () => replay(d, false) } }, 'Replay');
  }
  if (d.status === 'delivered') {
    return h('button', { type: 'button', class: 'trace-replay', data: { force: 'true' }, on: { click: () => replay(d, true) } }, 'Replay (force)');
  }
  return null;
}

async function replay(d, force) {
  const question = force
    ? `This delivery to ${d.destination_type} · ${d.destination_name} was already delivered. Send it again?`
    : d.skip_reason === 'mapping_failed'
      ? `Mapping this event for ${d.destination_type} · ${d.destination_name} stopped the delivery thread twice. Map and send it again (once its rules are fixed)?`
      : `Re-queue this ${d.status} delivery to ${d.destination_type} · ${d.destination_name}? It is sent again.`;
  if (!confirm(question)) return;
  try {
    await api(`/admin/deliveries/${encodeURIComponent(d.id)}/replay`, { method: 'POST', body: { force } });
    toast(`Delivery ${d.id} re-queued`, 'ok');
    if (shownId) await load(shownId, true);
  } catch (err) {
    report(err);
  }
}
