// What an operator does about a failing destination, from Destinations and Trace alike: send
// its pending deliveries now, pause it (disable) or enable it again, resume one the service
// paused, and re-queue its failed and dead deliveries. Each asks for confirmation first.
import { api, report, toast } from './api.js';
import { h } from './dom.js';

const label = (d) => `${d.type} · ${d.name ?? d.id}`;
const path = (d, tail) => `/admin/destinations/${encodeURIComponent(d.id)}${tail}`;

/** Runs `act` after the operator confirms `question`; then `done()` (a reload). */
async function confirmed(question, act, done) {
  if (!confirm(question)) return;
  try {
    toast(await act(), 'ok');
    await done();
  } catch (err) {
    report(err);
  }
}

export function retryNow(d, done) {
  return confirmed(`Send the pending deliveries of ${label(d)} now, without waiting for their next retry?`, async () => {
    const r = await api('/admin/deliveries/retry-now', { method: 'POST', body: { destination_id: d.id } });
    return `${label(d)}: ${r?.due ?? 0} deliveries due now`;
  }, done);
}

/** Pausing is disabling: its deliveries stay pending (nothing is sent) until it is enabled. */
export function setEnabled(d, enabled, done) {
  const question = enabled
    ? `Enable ${label(d)} again? Its pending deliveries are sent at their next retry time.`
    : `Pause ${label(d)}? It is disabled: nothing is sent to it and its deliveries wait until it is enabled.`;
  return confirmed(question, async () => {
    await api(path(d, ''), { method: 'PATCH', body: { enabled } });
    return `${label(d)} ${enabled ? 'enabled' : 'paused (disabled)'}`;
  }, done);
}

export function resume(d, done) {
  return confirmed(`Resume ${label(d)}, which the service paused? Its pending deliveries become due now.`, async () => {
    const r = await api(path(d, '/resume'), { method: 'POST', body: {} });
    return `${label(d)} resumed${r && r.due !== undefined ? `: ${r.due} deliveries due now` : ''}`;
  }, done);
}

/** Counts first (a dry run), so the confirmation says how many deliveries go out again. */
export async function replayDead(d, done) {
  const body = { destination_id: d.id, statuses: ['failed', 'dead'] };
  let count;
  try {
    count = (await api('/admin/deliveries/replay', { method: 'POST', body: { ...body, dry_run: true } }))?.would_replay ?? 0;
  } catch (err) {
    report(err);
    return;
  }
  if (count === 0) {
    toast(`${label(d)}: no failed or dead deliveries to replay`, 'ok');
    return;
  }
  await confirmed(`Re-queue ${count} failed or dead deliveries of ${label(d)}? Each is sent again.`, async () => {
    const r = await api('/admin/deliveries/replay', { method: 'POST', body });
    return `${label(d)}: ${r?.replayed ?? 0} deliveries re-queued${r?.left ? `, ${r.left} left (replay again)` : ''}`;
  }, done);
}

/**
 * The buttons for a destination `d` ({id, type, name, enabled, paused, pending, failedOrDead});
 * `done` reloads the view after an action.
 */
export function actionButtons(d, done) {
  const button = (cls, text, fn) => h('button', { type: 'button', class: cls, on: { click: () => void fn() } }, text);
  return h('span', { class: 'actions' },
    d.paused ? button('dest-resume primary', 'Resume', () => resume(d, done)) : null,
    d.pending > 0 ? button('dest-retry', 'Retry now', () => retryNow(d, done)) : null,
    d.enabled ? button('dest-pause', 'Pause', () => setEnabled(d, false, done)) : button('dest-enable', 'Enable', () => setEnabled(d, true, done)),
    d.failedOrDead > 0 ? button('dest-replay', 'Replay failed/dead', () => replayDead(d, done)) : null);
}
