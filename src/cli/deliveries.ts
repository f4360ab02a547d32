// `tracklane deliveries …`: list deliveries, show one with its attempts, replay dead or
// failed ones (delivered ones only with --force), send waiting retries now, resume a
// paused destination. A running server picks re-queued work up within about a second.
import { createAccountService } from '../accounts/account-service.ts';
import { DELIVERY_STATUSES, type DeliveryStatus, type DeliveryView, type ReplayFilter } from '../delivery/types.ts';
import type { Store } from '../store/types.ts';
import { bulkReplay, replayScopeProblem } from '../delivery/bulk-replay.ts';
import { intFlag, parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatKeyValue, formatTable, iso } from './output.ts';
import { usageFor } from './usage.ts';

const REPLAYABLE = ['dead', 'failed', 'delivered'] as const;
type Replayable = (typeof REPLAYABLE)[number];

/** The JSON shape of one delivery; `event_id` is the customer's event.id. */
export const deliveryJson = (d: DeliveryView) => ({
  id: d.id,
  event_id: d.eventId,
  destination_id: d.destinationId,
  destination_type: d.destinationType,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: iso(d.nextAttemptAt),
  paused: d.paused,
  script_id: d.scriptId,
  skip_reason: d.skipReason,
  received_at: iso(d.receivedAt),
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
  delivered_at: iso(d.deliveredAt),
});

const isStatus = (s: string): s is DeliveryStatus => (DELIVERY_STATUSES as readonly string[]).includes(s);

/** An unknown id is far more likely a typo than an account without deliveries. */
async function checkAccount(store: Store, scriptId: string | undefined): Promise<void> {
  if (scriptId !== undefined) await createAccountService(store).get(scriptId);
}

function parseSince(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const t = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(t)) throw new CliError(`--since must be an ISO 8601 date or time, got "${raw}"`);
  return t;
}

async function list(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['deliveries', 'list'];
  const { values, positionals: pos } = parseCommand(args, {
    account: { type: 'string' }, status: { type: 'string' }, 'event-id': { type: 'string' },
    destination: { type: 'string' }, limit: { type: 'string' },
  }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const status = values.status;
  if (status !== undefined && !isStatus(status)) throw new CliError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}, got "${status}"`);
  const limit = values.limit === undefined ? 100 : intFlag('limit', values.limit, 1, 10_000);
  const store = await ctx.store();
  await checkAccount(store, values.account);
  const rows = (await store.deliveries.list({
    scriptId: values.account, status, eventId: values['event-id'], destinationId: values.destination, limit,
  })).map(deliveryJson);
  ctx.output(values.json ?? false).result(rows, () =>
    rows.length === 0
      ? 'No deliveries.'
      : formatTable(
          ['ID', 'EVENT_ID', 'DESTINATION', 'TYPE', 'STATUS', 'ATTEMPTS', 'CODE', 'NEXT_ATTEMPT_AT', 'LAST_ERROR'],
          rows.map((d) => [d.id, d.event_id, d.destination_id, d.destination_type, d.paused && d.status === 'pending' ? 'pending (paused)' : d.status,
            d.attempts, d.last_status_code, d.next_attempt_at, d.last_error?.slice(0, 80)]),
        ));
}

async function show(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['deliveries', 'show'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [raw] = positionals(pos, ['ID'], cmd);
  const id = intFlag('ID', raw, 1, Number.MAX_SAFE_INTEGER);
  const store = await ctx.store();
  const attempts = await store.deliveries.attempts(id);
  const [found] = await store.deliveries.list({ id, limit: 1 });
  if (!found) throw new CliError(`no delivery with id ${id}`);
  const out = {
    ...deliveryJson(found),
    attempts_log: attempts.map((a) => ({
      id: a.id, attempted_at: iso(a.attemptedAt), status_code: a.statusCode, latency_ms: a.latencyMs, outcome: a.outcome,
      error_class: a.errorClass, message: a.message, events_in_request: a.events, response_body: a.responseBody,
    })),
  };
  ctx.output(values.json ?? false).result(out, () => {
    const { attempts_log: log, ...head } = out;
    const table = log.length === 0 ? '  (no attempts)' : formatTable(['AT', 'CODE', 'MS', 'OUTCOME', 'ERROR', 'MESSAGE'],
      log.map((a) => [a.attempted_at, a.status_code, a.latency_ms, a.outcome, a.error_class, a.message?.slice(0, 80)]));
    return `${formatKeyValue(Object.entries(head), '  ')}\n\nAttempts:\n${table}`;
  });
}

async function replay(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['deliveries', 'replay'];
  const { values, positionals: pos } = parseCommand(args, {
    account: { type: 'string' }, destination: { type: 'string' }, status: { type: 'string' }, since: { type: 'string' },
    'event-id': { type: 'string' }, force: { type: 'boolean' }, all: { type: 'boolean' }, 'dry-run': { type: 'boolean' },
  }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const status = values.status;
  if (status !== undefined && !(REPLAYABLE as readonly string[]).includes(status)) {
    throw new CliError(`--status must be one of ${REPLAYABLE.join(', ')}, got "${status}"`);
  }
  if (status === 'delivered' && !values.force) throw new CliError('re-sending delivered deliveries needs --force');
  const statuses: Replayable[] = status !== undefined ? [status as Replayable] : values.force ? ['dead', 'failed', 'delivered'] : ['dead', 'failed'];
  const filter: ReplayFilter = {
    scriptId: values.account, destinationId: values.destination, eventId: values['event-id'], statuses, since: parseSince(values.since),
  };
  const request = { filter, all: values.all ?? false, dryRun: values['dry-run'] ?? false, max: ctx.config().maxReplay };
  requireScope(request);
  const store = await ctx.store();
  await checkAccount(store, values.account);
  const r = await bulkReplay(store.deliveries, request, Date.now());
  const out = ctx.output(values.json ?? false);
  if (r.dryRun) {
    out.result({ would_replay: r.wouldReplay, max_per_call: r.max, statuses }, () =>
      `Would re-queue ${r.wouldReplay} ${r.wouldReplay === 1 ? 'delivery' : 'deliveries'} (${statuses.join(', ')}); nothing changed. One call re-queues at most ${r.max} (MAX_REPLAY).`);
    return;
  }
  out.result({ replayed: r.replayed, left: r.left, max_per_call: r.max, statuses }, () =>
    `Re-queued ${r.replayed} ${r.replayed === 1 ? 'delivery' : 'deliveries'} (${statuses.join(', ')}); a running server sends them within seconds.` +
    (r.left > 0 ? ` ${r.left} more match: run the command again (at most ${r.max} per call, MAX_REPLAY).` : ''));
}

/** Refuses a cross-account action without --account, --destination or --all, in the flags' words. */
function requireScope(request: Parameters<typeof replayScopeProblem>[0], action?: string): void {
  const problem = replayScopeProblem(request, action);
  if (problem !== null) throw new CliError(problem.replace('(script_id)', '(--account)').replace('(destination_id)', '(--destination)').replace('"all"', '--all'));
}

async function retryNow(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['deliveries', 'retry-now'];
  const { values, positionals: pos } = parseCommand(args, { account: { type: 'string' }, destination: { type: 'string' }, all: { type: 'boolean' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  requireScope({ filter: { scriptId: values.account, destinationId: values.destination }, all: values.all ?? false }, 'retry-now');
  const store = await ctx.store();
  await checkAccount(store, values.account);
  if (values.destination !== undefined && !(await store.deliveries.activeDestinations()).some((d) => d.id === values.destination)) {
    throw new CliError(`no destination "${values.destination}"`);
  }
  const due = await store.deliveries.retryNow({ scriptId: values.account, destinationId: values.destination }, Date.now());
  ctx.output(values.json ?? false).result({ due }, () =>
    `${due} pending ${due === 1 ? 'delivery waiting for a retry is' : 'deliveries waiting for a retry are'} due now; ` +
    'a running server sends them within seconds (a paused destination needs `deliveries resume DEST_ID` first).');
}

async function resume(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['deliveries', 'resume'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [destId] = positionals(pos, ['DEST_ID'], cmd);
  const store = await ctx.store();
  if (!(await store.deliveries.activeDestinations()).some((d) => d.id === destId)) throw new CliError(`no destination "${destId}"`);
  const r = await store.deliveries.resume(destId, Date.now());
  ctx.output(values.json ?? false).result({ destination_id: destId, was_paused: r.wasPaused, due: r.due }, () =>
    `${r.wasPaused ? 'Resumed' : 'Destination was not paused;'} ${destId}: ${r.due} pending ${r.due === 1 ? 'delivery is' : 'deliveries are'} due now.`);
}

/** Runs `deliveries <command> …`. */
export async function runDeliveries(args: string[], ctx: CliContext): Promise<void> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h') return void process.stdout.write(usageFor('deliveries'));
  switch (name) {
    case 'list': return list(rest, ctx);
    case 'show': return show(rest, ctx);
    case 'replay': return replay(rest, ctx);
    case 'resume': return resume(rest, ctx);
    case 'retry-now': return retryNow(rest, ctx);
    default:
      throw new UsageError(name === undefined ? 'deliveries needs a command' : `unknown command "deliveries ${name}"`, ['deliveries']);
  }
}
