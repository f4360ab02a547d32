// `tracklane events list`: received events, newest first, as the store recorded
// them (rejected ones with their validation errors). `events show EVENT_ID`: one event
// with its stored payload and every delivery it led to.
import { createAccountService } from '../accounts/account-service.ts';
import type { EventRecord, EventStatus } from '../store/types.ts';
import type { Issue } from '../schema/types.ts';
import { intFlag, parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatKeyValue, formatTable, iso } from './output.ts';
import { deliveryJson } from './deliveries.ts';
import { usageFor } from './usage.ts';

const STATUSES: readonly EventStatus[] = ['accepted', 'rejected', 'duplicate'];
const MAX_LIMIT = 10_000;

/** The JSON shape of one event; `event_id` is the customer's event.id. */
export interface EventJson {
  id: string;
  script_id: string;
  event_id: string | null;
  name: string | null;
  status: EventStatus;
  source: string;
  request_id: string;
  received_at: string;
  errors: Issue[];
  warnings: Issue[];
}

export const eventJson = (e: EventRecord): EventJson => ({
  id: e.id,
  script_id: e.scriptId,
  event_id: e.eventId,
  name: e.name,
  status: e.status,
  source: e.source,
  request_id: e.requestId,
  received_at: iso(e.receivedAt)!,
  errors: e.errors,
  warnings: e.warnings,
});

const isStatus = (s: string): s is EventStatus => (STATUSES as readonly string[]).includes(s);

async function list(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['events', 'list'];
  const { values, positionals: pos } = parseCommand(args, {
    account: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
  }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const status = values.status;
  if (status !== undefined && !isStatus(status)) {
    throw new CliError(`--status must be one of ${STATUSES.join(', ')}, got "${status}"`);
  }
  const limit = values.limit === undefined ? 100 : intFlag('limit', values.limit, 1, MAX_LIMIT);
  const out = ctx.output(values.json ?? false);
  const store = await ctx.store();
  // An unknown id is far more likely a typo than an account without events.
  if (values.account !== undefined) await createAccountService(store).get(values.account);
  const events = (await store.events.list({ scriptId: values.account, status, limit })).map(eventJson);
  out.result(events, () =>
    events.length === 0
      ? 'No events.'
      : formatTable(
          ['RECEIVED_AT', 'SCRIPT_ID', 'STATUS', 'NAME', 'EVENT_ID', 'ERRORS'],
          events.map((e) => [e.received_at, e.script_id, e.status, e.name, e.event_id, summarize(e.errors)]),
        ));
}

function summarize(errors: Issue[]): string {
  if (errors.length === 0) return '';
  const first = `${errors[0].field || '(body)'} ${errors[0].code}`;
  return errors.length === 1 ? first : `${first} (+${errors.length - 1} more)`;
}

/** Runs `events <command> …`. */
export async function runEvents(args: string[], ctx: CliContext): Promise<void> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h') return void process.stdout.write(usageFor('events'));
  if (name === undefined) throw new UsageError('events needs a command', ['events']);
  if (name === 'show') return show(rest, ctx);
  if (name !== 'list') throw new UsageError(`unknown command "events ${name}"`, ['events']);
  await list(rest, ctx);
}

/** Every event stored under `EVENT_ID` (the customer's event.id, or tracklane's own row id). */
async function show(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['events', 'show'];
  const { values, positionals: pos } = parseCommand(args, { account: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [eventId] = positionals(pos, ['EVENT_ID'], cmd);
  const store = await ctx.store();
  if (values.account !== undefined) await createAccountService(store).get(values.account);
  let events = await store.events.list({ scriptId: values.account, eventId, limit: 100 });
  if (events.length === 0) {
    events = await store.events.list({ scriptId: values.account, id: eventId, limit: 100 });
  }
  if (events.length === 0) {
    throw new CliError(`no event with id "${eventId}"${values.account ? ` for account ${values.account}` : ''} (events older than RETENTION_DAYS are purged)`);
  }
  const accounts = [...new Set(events.map((e) => e.scriptId))];
  if (accounts.length > 1) {
    throw new CliError(`"${eventId}" was received for ${accounts.length} accounts (${accounts.join(', ')}); add --account ID`);
  }
  const [first] = events;
  // Deliveries are recorded per customer event id; events sharing one id share the list.
  const deliveries = (await store.deliveries.list({ scriptId: first.scriptId, eventId: first.eventId ?? undefined, limit: 1000 }))
    .filter((d) => first.eventId !== null || d.eventId === null)
    .map(deliveryJson);
  const shown = { event_id: first.eventId ?? first.id, script_id: first.scriptId, events: events.map((e) => ({ ...eventJson(e), payload: e.payload })), deliveries };
  ctx.output(values.json ?? false).result(shown, () => {
    const blocks = shown.events.map((e) => {
      const { payload, errors, warnings, ...head } = e;
      const issues = [...errors.map((i) => `error   ${i.field} ${i.code}: ${i.message}`), ...warnings.map((i) => `warning ${i.field} ${i.code}: ${i.message}`)];
      return [
        formatKeyValue(Object.entries(head), '  '),
        issues.length > 0 ? `\nIssues:\n${issues.map((l) => `  ${l}`).join('\n')}` : '',
        `\nPayload:\n${JSON.stringify(payload, null, 2).replace(/^/gm, '  ')}`,
      ].filter((x) => x !== '').join('\n');
    });
    const table = deliveries.length === 0
      ? events.some((e) => e.status === 'accepted') ? '  (none yet: awaiting fan-out, or no destination)' : '  (none: nothing accepted under this id)'
      : formatTable(['ID', 'DESTINATION', 'TYPE', 'STATUS', 'ATTEMPTS', 'CODE', 'NEXT_ATTEMPT_AT', 'LAST_ERROR'],
        deliveries.map((d) => [d.id, d.destination_id, d.destination_type, d.skip_reason ? `${d.status} (${d.skip_reason})` : d.status,
          d.attempts, d.last_status_code, d.next_attempt_at, d.last_error?.slice(0, 80)]));
    return `${blocks.join('\n\n')}\n\nDeliveries:\n${table}`;
  });
}
