// The admin API's runs of a draft, a preview of one event and a replay of the last stored
// events, handed to the draft runner (off the HTTP thread, within its time limit), and how
// each outcome answers: the comparison, 503 past the time limit, 429 when the queue is full.
import type { Account } from '../accounts/types.ts';
import { AppError } from '../errors.ts';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import { ruleLists, type DraftRequest, type DraftResult, type DraftRunner, type DraftSubject, type ReplayTally } from '../pipeline/draft-preview.ts';
import type { PreviewInput } from '../pipeline/preview-event.ts';
import { DraftPoolBusy, DraftStopped } from './draft-pool.ts';

export const DEFAULT_REPLAY = 100;
/** Stored events one replay through a draft plans at most. */
export const MAX_REPLAY = 500;

export interface DraftRunDeps {
  store: Store;
  drafts: DraftRunner;
  /** The live rules. */
  live: () => RuleSet;
}

/** An event as a preview plans it. */
export type DraftEvent = Omit<PreviewInput, 'destinations' | 'now' | 'account'> & { account: Pick<Account, 'scriptId' | 'country' | 'host'> };

/** The requests `destinations` would get for one event with the live rules and with `draft`. */
export async function previewThroughDraft(deps: DraftRunDeps, type: string, draft: RuleSet, subject: DraftEvent, destinations: readonly DestinationRecord[]) {
  if (destinations.length === 0) return { before: [], after: [] };
  const lists = ruleLists();
  const live = deps.live();
  const now = Date.now();
  // One subject per destination: the time limit is looked at between them.
  const subjects = destinations.map((d) => subjectOf(lists, live, draft, type, { ...subject, destinations: [d], now }, { id: subject.eventId, event_id: null, name: null }));
  const r = await runDraft(deps.drafts, { kind: 'preview', type, lists: lists.lists, subjects });
  if (r.kind !== 'preview') throw new Error(`a preview answered ${r.kind}`);
  return { before: r.before, after: r.after };
}

/**
 * Stored events one task of a replay plans: loaded, handed to the thread and let go a page
 * at a time, so a replay of 500 large events never loads (or copies to the thread) them all
 * at once, and the HTTP thread is free between pages.
 */
export const REPLAY_PAGE = 25;

/**
 * How many native requests a draft would change: each of the last `last` accepted events
 * (of one account, or of every account) planned for its account's enabled destinations of
 * this type with the live rules and with the draft (same clock), requests compared byte for
 * byte. The draft set is the whole effective set, so a change to the defaults also shows in
 * accounts whose overrides keep the changed rule. Planned page by page (REPLAY_PAGE), the
 * pages sharing one time limit.
 */
export async function replayThroughDraft(deps: DraftRunDeps, type: string, draft: RuleSet, opts: { scriptId?: string; last: number }) {
  const accounts = new Map<string, Account | null>();
  const destinations = new Map<string, DestinationRecord[]>();
  const live = deps.live();
  const now = Date.now();
  const tally: ReplayTally = { events: 0, requests_before: 0, requests_after: 0, events_changed: 0, destinations_changed: 0, samples: [] };
  let considered = 0;
  let beforeSeq: number | undefined;
  let spentMs = 0;
  while (considered < opts.last) {
    const page = await deps.store.events.list({ status: 'accepted', scriptId: opts.scriptId, limit: Math.min(REPLAY_PAGE, opts.last - considered), beforeSeq });
    if (page.length === 0) break;
    beforeSeq = page[page.length - 1].seq;
    considered += page.length;
    const lists = ruleLists();
    const subjects: DraftSubject[] = [];
    for (const e of page) {
      if (!accounts.has(e.scriptId)) accounts.set(e.scriptId, await deps.store.accounts.get(e.scriptId));
      if (!destinations.has(e.scriptId)) destinations.set(e.scriptId, (await deps.store.destinations.list(e.scriptId)).filter((d) => d.type === type && d.enabled));
      const account = accounts.get(e.scriptId);
      const dests = destinations.get(e.scriptId)!;
      if (!account || dests.length === 0) continue;
      const input: PreviewInput = {
        account: accountOf(account), destinations: dests, event: e.payload as NormalizedEvent, eventId: e.eventId ?? e.id, receivedAt: e.receivedAt, now,
      };
      subjects.push(subjectOf(lists, live, draft, type, input, { id: e.id, event_id: e.eventId, name: e.name }));
    }
    if (subjects.length === 0) continue;
    const stoppedAt = (done: number) => ` after ${tally.events + done} of the last ${opts.last} events`;
    if (spentMs > deps.drafts.timeLimitMs) throw late(deps.drafts, 'replay', stoppedAt(0));
    const r = await runDraft(deps.drafts, { kind: 'replay', type, lists: lists.lists, subjects, budgetMs: deps.drafts.timeLimitMs - spentMs });
    if (r.kind === 'stopped') throw late(deps.drafts, 'replay', stoppedAt(r.done));
    if (r.kind !== 'replay') throw new Error(`a replay answered ${r.kind}`);
    // Planning time as the thread measured it: a thread's start and the copies to it are not the draft's cost.
    spentMs += r.planningMs;
    addTally(tally, r.tally);
  }
  const { samples, ...counts } = tally;
  return { ...counts, considered, samples };
}

/** One page's counts into the run's; samples up to the first 10. */
function addTally(into: ReplayTally, page: ReplayTally): void {
  into.events += page.events;
  into.requests_before += page.requests_before;
  into.requests_after += page.requests_after;
  into.events_changed += page.events_changed;
  into.destinations_changed += page.destinations_changed;
  into.samples.push(...page.samples.slice(0, Math.max(0, 10 - into.samples.length)));
}

/** Only what the mapping reads of an account crosses to the worker. */
export const accountOf = (a: Pick<Account, 'scriptId' | 'country' | 'host'>): Pick<Account, 'scriptId' | 'country' | 'host'> =>
  ({ scriptId: a.scriptId, country: a.country, host: a.host });

function subjectOf(
  lists: ReturnType<typeof ruleLists>, live: RuleSet, draft: RuleSet, type: string, input: PreviewInput, event: DraftSubject['event'],
): DraftSubject {
  const scriptId = input.account.scriptId;
  return { input: { ...input, account: accountOf(input.account) }, before: lists.add(live.rulesFor(scriptId, type)), after: lists.add(draft.rulesFor(scriptId, type)), event };
}

/** 503 for a run stopped past its time limit, saying how far it got (`detail`). */
function late(drafts: DraftRunner, kind: DraftRequest['kind'], detail: string): AppError {
  const what = kind === 'replay' ? 'The replay through the draft' : 'The preview';
  return new AppError('UNAVAILABLE', 503,
    `${what} ran past its time limit of ${drafts.timeLimitMs / 1000} s and was stopped${detail}${kind === 'replay' ? '; replay fewer events (last)' : ''}`,
    { retryAfter: 5, expose: true });
}

/** The runner's answer (a preview's `stopped` as 503), or the coded error for a task it refused or stopped. */
async function runDraft(drafts: DraftRunner, request: DraftRequest): Promise<DraftResult> {
  let r: DraftResult;
  try {
    r = await drafts.run(request);
  } catch (err) {
    if (err instanceof DraftPoolBusy) throw new AppError('RATE_LIMITED', 429, `Too many rule previews are waiting (${err.message}); try again shortly`, { retryAfter: 5 });
    if (err instanceof DraftStopped) throw late(drafts, request.kind, '');
    throw err;
  }
  if (r.kind === 'stopped' && request.kind === 'preview') throw late(drafts, 'preview', ` after ${r.done} of ${r.of} destinations`);
  return r;
}
