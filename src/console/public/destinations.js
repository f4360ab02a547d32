// Destinations view: each destination's queue counts, oldest pending age, how long due work
// has waited (flagged lagging past a minute), last error, paused state, and its actions
// (retry now, pause/enable, resume, replay failed and dead: delivery-actions.js).
import { api, qs, report } from './api.js';
import { $, fill, fmtAge, fmtDuration, h } from './dom.js';
import { actionButtons } from './delivery-actions.js';

let loadSeq = 0;

export function init() {
  $('#dest-refresh').addEventListener('click', () => void load());
  $('#dest-filter-account').addEventListener('change', () => void load());
}

export function show() {
  void load();
}

async function load() {
  const seq = ++loadSeq;
  const tbody = $('#dest-table tbody');
  try {
    const { items = [] } = (await api(`/admin/destinations${qs({ script_id: $('#dest-filter-account').value })}`)) ?? {};
    if (seq !== loadSeq) return;
    fill(tbody, items.length === 0 ? h('tr', {}, h('td', { colspan: '13', class: 'muted' }, 'No destinations.')) : items.map(row));
  } catch (err) {
    report(err);
  }
}

function row(d) {
  const c = d.counts ?? {};
  // Each cell carries its column's name (data-label): a narrow screen lays the row out as a card
  // (console.css), state first, with the name beside each value instead of a header far above.
  const td = (cls, label, ...content) => h('td', { class: cls, data: { label } }, ...content);
  const count = (key, warnCls = '') => td(`num dest-count ${c[key] > 0 ? warnCls : ''}`, key, String(c[key] ?? 0));
  return h('tr', { class: `dest-row${d.paused_at ? ' paused' : ''}${d.enabled ? '' : ' disabled'}`, data: { destinationId: d.id } },
    td('dest-account', 'account', d.script_id ?? ''),
    td('dest-type', 'type', d.type ?? ''),
    td('dest-name', 'name', d.name ?? ''),
    td('dest-enabled dest-state', 'enabled', d.enabled ? 'yes' : 'no'),
    count('pending', 'warn'),
    count('delivered'),
    count('failed', 'bad'),
    count('dead', 'bad'),
    td('nowrap dest-oldest', 'oldest pending', d.oldest_pending_at ? fmtAge(d.oldest_pending_at) : '—'),
    td('nowrap dest-overdue', 'overdue', d.lagging
      ? [h('span', { class: 'status status-lagging', title: 'work has waited past its due time for more than a minute' }, 'lagging'), ` ${fmtDuration(d.overdue_seconds * 1000)}`]
      : d.overdue_seconds > 0 ? fmtDuration(d.overdue_seconds * 1000) : '—'),
    td('bad dest-error', 'last error', d.last_error ?? ''),
    td('nowrap dest-paused dest-state', 'paused', d.paused_at
      ? [h('span', { class: 'status status-paused' }, `paused ${fmtAge(d.paused_at)} ago`), ' ',
        d.pause_reason ? h('span', { class: 'muted' }, pauseText(d.pause_reason)) : null]
      : d.enabled ? 'no' : 'disabled'),
    td('nowrap dest-actions', 'actions', actionButtons({
      id: d.id, type: d.type, name: d.name, enabled: d.enabled, paused: Boolean(d.paused_at),
      pending: c.pending ?? 0, failedOrDead: (c.failed ?? 0) + (c.dead ?? 0),
    }, load)));
}

/** A pause reason as the operator acts on it: `reauthorize` says what to give. */
function pauseText(reason) {
  return reason === 'reauthorize'
    ? 'reauthorize: the platform refused the refresh token; authorize the app again and give the new refresh_token (destinations update --config)'
    : reason;
}
