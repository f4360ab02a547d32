// One request, many events, each settled by its own verdict. A reply may name events (by
// index in the request): each named one takes its own verdict and reason. The others take
// the request's verdict — unless the reply says they were never processed (`others`): then
// they go out again, without the named ones (`resend`), or in halves when the reply named
// none (`split`), so one bad event never costs the good ones of its batch. Every round
// carries fewer events, so it ends: a lone event refused whole takes the request's verdict.
import type { EventVerdict, Verdict } from './retry-policy.ts';
import type { ClaimedDelivery } from './types.ts';

export interface Settlement {
  /** The deliveries this attempt settles, each with the verdict it takes. */
  settled: { delivery: ClaimedDelivery; verdict: EventVerdict; own: boolean }[];
  /** Deliveries the receiver never processed: each list is sent again as requests of its own. */
  again: ClaimedDelivery[][];
}

/**
 * @example
 * settle(unit.deliveries, unit.request.eventIds.length, verdict) // { settled: [...], again: [[d0, d2]] }
 */
export function settle(deliveries: readonly ClaimedDelivery[], requestEvents: number, verdict: Verdict): Settlement {
  // Indexes name the request's events; they name deliveries only when each event has its delivery.
  const named = verdict.events !== undefined && deliveries.length === requestEvents ? verdict.events : undefined;
  const settled: Settlement['settled'] = [];
  const unnamed: ClaimedDelivery[] = [];
  deliveries.forEach((delivery, i) => {
    const own = named?.get(i);
    if (own !== undefined) settled.push({ delivery, verdict: own, own: true });
    else unnamed.push(delivery);
  });
  const lone = unnamed.length === 1 && settled.length === 0;
  if (verdict.others === undefined || unnamed.length === 0 || lone) {
    for (const delivery of unnamed) settled.push({ delivery, verdict, own: false });
    return { settled, again: [] };
  }
  const again = verdict.others === 'resend' && settled.length > 0 ? [unnamed] : halves(unnamed);
  return { settled, again };
}

function halves<T>(list: T[]): T[][] {
  if (list.length < 2) return [list];
  const mid = Math.ceil(list.length / 2);
  return [list.slice(0, mid), list.slice(mid)];
}
