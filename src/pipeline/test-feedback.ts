// What test mode (endpoint 2, custom endpoints with env=test) says about one valid event
// beyond validation: duplicate and funnel warnings, and per destination the exact
// requests it would get. Stores and sends nothing.
import type { Account } from '../accounts/types.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord, EventStore } from '../store/types.ts';
import { issueString } from '../schema/issue-text.ts';
import { funnelWarnings } from './funnel-check.ts';
import { planPreview, type DestinationPreview, type PlatformCheck, type PreviewDeps } from './preview-event.ts';

export interface TestFeedback {
  /** Duplicate, funnel and per-destination warnings, as strings that start with their code or destination type. */
  warnings: string[];
  preview: DestinationPreview[];
  /** With `validate`: each preview entry's platform check (null: nothing to check). Secrets in clear: never in an answer. */
  checks?: (PlatformCheck | null)[];
}

export async function testFeedback(
  deps: { events: Pick<EventStore, 'seenProducts' | 'isDuplicate'>; preview: PreviewDeps },
  input: {
    account: Pick<Account, 'scriptId' | 'country' | 'host'>; destinations: readonly DestinationRecord[]; event: NormalizedEvent; eventId: string; now: number;
    /** Build each destination's platform check too (endpoint 2's `?validate=platform`). */
    validate?: boolean;
  },
): Promise<TestFeedback> {
  const { account, event, now } = input;
  const warnings: string[] = [];
  const environment = event.context.environment === 'dev' ? 'dev' : 'prod';
  if (event.event.id !== undefined && (await deps.events.isDuplicate(account.scriptId, event.event.name, event.event.id, now, environment))) {
    warnings.push(issueString({
      field: 'event.id',
      code: 'DUPLICATE_EVENT',
      message: `a ${environment} ${event.event.name} with this event.id was already received; it would be acknowledged but not forwarded again`,
    }));
  }
  warnings.push(...(await funnelWarnings(deps.events, account.scriptId, event)).map(issueString));
  const { preview, checks } = await planPreview(deps.preview, {
    account,
    destinations: input.destinations,
    event,
    eventId: input.eventId,
    receivedAt: now,
    now,
    ...(input.validate === true ? { validate: true } : {}),
  });
  for (const d of preview) warnings.push(...d.warnings);
  return { warnings, preview, ...(checks === undefined ? {} : { checks }) };
}
