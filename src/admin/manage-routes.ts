// The admin API's share of what the CLI does: accounts (create, update, rotate the token),
// destinations (add, update, remove; secrets always masked in answers), deliveries (list in
// pages, one with its attempts, bulk replay, retry now) and the plugins loaded. Same services
// and checks as the CLI (the SSRF guard on every URL setting included); every change logged.
import Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import { AccountInputError, createAccountService, type UpdateAccountInput } from '../accounts/account-service.ts';
import { createDestinationService, DestinationInputError } from '../destinations/destination-service.ts';
import { mergeSettings } from '../destinations/merge-settings.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { checkDestinationUrl } from '../delivery/ssrf-guard.ts';
import { bulkReplay, replayScopeProblem } from '../delivery/bulk-replay.ts';
import { DELIVERY_STATUSES, type DeliveryStatus, type DeliveryView, type ReplayFilter } from '../delivery/types.ts';
import type { Account } from '../accounts/types.ts';
import type { AppContext, AppState } from '../http/types.ts';
import { adminLog, jsonBody, pageLimit, param } from './admin-params.ts';
import { encodeCursor, pageCursor } from './page-cursor.ts';

export interface ManageDeps {
  store: Store;
  plugins: PluginRegistry;
  allowPrivateDestinations: boolean;
  /** Deliveries one bulk replay re-queues at most (MAX_REPLAY). */
  maxReplay: number;
  /** The intake's account cache, dropped after a change so it applies at once. */
  authenticator?: { invalidate(): void };
}

type Params = { params: Record<string, string> };
const REPLAYABLE = ['failed', 'dead', 'delivered'] as const;

/** The services' input errors are the operator's to fix: 400 with their message. */
async function asInput<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AccountInputError || err instanceof DestinationInputError) {
      const missing = /^no account|has no destination/.test(err.message);
      throw new AppError(missing ? 'NOT_FOUND' : 'INVALID_VALUE', missing ? 404 : 400, err.message);
    }
    throw err;
  }
}

const accountView = (a: Account) => ({
  script_id: a.scriptId, name: a.name, tier: a.tier, addon: a.addon, enabled: a.enabled, host: a.host, country: a.country,
  tax_rate: a.taxRate, approved_events: a.extraEvents, customer: a.customer, endpoint_pins: a.endpointPins, rate_limit: a.rateLimit,
  consent_default: a.consentDefault, created_at: a.createdAt, updated_at: a.updatedAt,
});

const deliveryView = (d: DeliveryView) => ({
  id: d.id, script_id: d.scriptId, event_id: d.eventId, destination_id: d.destinationId, destination_type: d.destinationType,
  status: d.status, skip_reason: d.skipReason, attempts: d.attempts, last_status_code: d.lastStatusCode, last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt, received_at: d.receivedAt, created_at: d.createdAt, updated_at: d.updatedAt,
  delivered_at: d.deliveredAt, paused: d.paused,
});

/** The body's value when it has the right type; absent stays undefined; wrong type is a 400. */
function field<T>(body: Record<string, unknown>, key: string, type: 'string' | 'boolean' | 'number' | 'object' | 'nullable-string' | 'nullable-number'): T | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  const base = type.replace('nullable-', '');
  if ((type.startsWith('nullable-') && v === null) || (base === 'object' ? v !== null && typeof v === 'object' && !Array.isArray(v) : typeof v === base)) return v as T;
  throw new AppError('INVALID_TYPE', 400, `${key} must be ${type.replace('nullable-', 'null or a ')}`, { field: key });
}

/** 400 REQUIRED_FIELD_MISSING when a cross-account action names no account, no destination and not `all`. */
function requireScope(request: Parameters<typeof replayScopeProblem>[0], action?: string): void {
  const problem = replayScopeProblem(request, action);
  if (problem !== null) throw new AppError('REQUIRED_FIELD_MISSING', 400, problem, { field: 'script_id' });
}

export function manageRouter(deps: ManageDeps): Router<AppState> {
  const { store } = deps;
  const router = new Router<AppState>({ prefix: '/admin' });
  const accounts = createAccountService(store);
  const destinations = createDestinationService(store, deps.plugins, {
    checkUrl: (url) => checkDestinationUrl(url, { allowPrivate: deps.allowPrivateDestinations }),
  });
  const id = (ctx: AppContext, name: string) => (ctx as AppContext & Params).params[name];

  router.post('/accounts', jsonBody(), async function adminCreateAccount(ctx: AppContext) {
    const b = ctx.state.body!;
    const name = field<string>(b, 'name', 'string');
    if (!name) throw new AppError('REQUIRED_FIELD_MISSING', 400, 'name is required', { field: 'name' });
    const created = await asInput(() => accounts.create({
      name, tier: field(b, 'tier', 'string'), addon: field(b, 'addon', 'boolean'), host: field(b, 'host', 'nullable-string'),
      country: field(b, 'country', 'nullable-string'), taxRate: field(b, 'tax_rate', 'nullable-number'),
    }));
    deps.authenticator?.invalidate();
    adminLog(ctx, 'account.create', created.account.scriptId, { name, tier: created.account.tier });
    ctx.status = 201;
    // The token is shown this once, as by `accounts create`.
    ctx.body = { ...accountView(created.account), access_token: created.accessToken };
  });

  router.patch('/accounts/:id', jsonBody(), async function adminUpdateAccount(ctx: AppContext) {
    const b = ctx.state.body!;
    const approve = b.approve_events;
    if (approve !== undefined && (!Array.isArray(approve) || !approve.every((x) => typeof x === 'string'))) {
      throw new AppError('INVALID_TYPE', 400, 'approve_events must be a list of event names', { field: 'approve_events' });
    }
    const patch: UpdateAccountInput = {
      name: field(b, 'name', 'string'), tier: field(b, 'tier', 'string'), addon: field(b, 'addon', 'boolean'), enabled: field(b, 'enabled', 'boolean'),
      host: field(b, 'host', 'nullable-string'), country: field(b, 'country', 'nullable-string'), taxRate: field(b, 'tax_rate', 'nullable-number'),
      approveEvents: approve as string[] | undefined, customer: field(b, 'customer', 'nullable-string'), rateLimit: field(b, 'rate_limit', 'nullable-number'),
      consentDefault: field(b, 'consent_default', 'string'),
    };
    const { account: a, unpinned } = await asInput(() => accounts.updateReporting(id(ctx, 'id'), patch));
    deps.authenticator?.invalidate();
    adminLog(ctx, 'account.update', a.scriptId, { ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      ...(Object.keys(unpinned).length > 0 ? { unpinned_endpoints: unpinned } : {}) });
    // A change of customer drops the pins, which named the previous customer's endpoints: said here.
    ctx.body = { ...accountView(a), unpinned_endpoints: unpinned };
  });

  router.post('/accounts/:id/rotate-token', jsonBody(), async function adminRotateToken(ctx: AppContext) {
    const hours = field<number>(ctx.state.body ?? {}, 'grace_hours', 'number') ?? 24;
    const r = await asInput(() => accounts.rotateToken(id(ctx, 'id'), hours));
    deps.authenticator?.invalidate();
    adminLog(ctx, 'account.rotate-token', id(ctx, 'id'), { grace_hours: hours });
    ctx.body = { access_token: r.accessToken, previous_token_expires_at: r.previousTokenExpiresAt };
  });

  router.get('/plugins', function adminPlugins(ctx: AppContext) {
    ctx.body = { items: [...deps.plugins.values()].map((p) => ({ name: p.plugin.name, secret_settings: p.plugin.secretSettings })) };
  });

  router.post('/destinations', jsonBody(), async function adminAddDestination(ctx: AppContext) {
    const b = ctx.state.body!;
    const scriptId = field<string>(b, 'script_id', 'string') ?? '';
    const type = field<string>(b, 'type', 'string') ?? '';
    const d = await asInput(() => destinations.add(scriptId, type, b.config, field(b, 'name', 'string')));
    adminLog(ctx, 'destination.add', d.id, { script_id: scriptId, type });
    ctx.status = 201;
    ctx.body = destinations.view(d);
  });

  router.patch('/destinations/:id', jsonBody(), async function adminUpdateDestination(ctx: AppContext) {
    const b = ctx.state.body!;
    const current = await ownerOf(id(ctx, 'id'));
    const config = b.config === undefined ? undefined : b.replace_config === true ? b.config : mergeSettings(current.settings, b.config).settings;
    const d = await asInput(() => destinations.update(current.scriptId, current.id, { settings: config, enabled: field(b, 'enabled', 'boolean'), name: field(b, 'name', 'string') }));
    adminLog(ctx, 'destination.update', d.id, { config_keys: b.config && typeof b.config === 'object' ? Object.keys(b.config) : [], replace: b.replace_config === true, enabled: b.enabled, name: b.name });
    ctx.body = destinations.view(d);
  });

  router.delete('/destinations/:id', async function adminRemoveDestination(ctx: AppContext) {
    const current = await ownerOf(id(ctx, 'id'));
    const r = await asInput(() => destinations.remove(current.scriptId, current.id));
    adminLog(ctx, 'destination.remove', current.id, r);
    ctx.body = { removed: true, canceled: r.canceled };
  });

  /** A destination by id alone (the admin sees every account). */
  async function ownerOf(destinationId: string) {
    const d = await store.destinations.find(destinationId);
    if (!d) throw new AppError('NOT_FOUND', 404, `No destination with id ${destinationId.slice(0, 64)}`);
    return d;
  }

  router.get('/deliveries', async function adminDeliveries(ctx: AppContext) {
    const status = param(ctx, 'status');
    if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      throw new AppError('INVALID_VALUE', 400, `status must be one of ${DELIVERY_STATUSES.join(', ')}`, { field: 'status' });
    }
    const limit = pageLimit(ctx);
    const rows = await store.deliveries.list({
      scriptId: param(ctx, 'script_id'), status: status as DeliveryStatus | undefined, eventId: param(ctx, 'event_id'),
      destinationId: param(ctx, 'destination_id'), beforeId: pageCursor(ctx), limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    ctx.body = { items: page.map(deliveryView), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null };
  });

  router.get('/deliveries/:id', async function adminDelivery(ctx: AppContext) {
    const n = Number(id(ctx, 'id'));
    const [d] = Number.isSafeInteger(n) ? await store.deliveries.list({ id: n, limit: 1 }) : [];
    if (!d) throw new AppError('NOT_FOUND', 404, 'No such delivery');
    const attempts = await store.deliveries.attempts(d.id);
    ctx.body = {
      ...deliveryView(d),
      attempt_log: attempts.map((a) => ({
        id: a.id, attempted_at: a.attemptedAt, status_code: a.statusCode, latency_ms: a.latencyMs, outcome: a.outcome,
        error_class: a.errorClass, message: a.message, events: a.events, response: a.responseBody?.slice(0, 2048) ?? null,
      })),
    };
  });

  router.post('/deliveries/replay', jsonBody(), async function adminBulkReplay(ctx: AppContext) {
    const b = ctx.state.body!;
    const force = b.force === true;
    const given = b.statuses ?? (force ? REPLAYABLE : ['failed', 'dead']);
    if (!Array.isArray(given) || given.length === 0 || !given.every((s) => (REPLAYABLE as readonly unknown[]).includes(s))) {
      throw new AppError('INVALID_VALUE', 400, `statuses must list some of ${REPLAYABLE.join(', ')}`, { field: 'statuses' });
    }
    if (given.includes('delivered') && !force) throw new AppError('CONFLICT', 409, 'Re-sending delivered deliveries needs "force": true');
    const filter: ReplayFilter = {
      scriptId: field(b, 'script_id', 'string'), destinationId: field(b, 'destination_id', 'string'), eventId: field(b, 'event_id', 'string'),
      since: field(b, 'since', 'number'), statuses: given as ReplayFilter['statuses'],
    };
    const request = { filter, all: field<boolean>(b, 'all', 'boolean') === true, dryRun: field<boolean>(b, 'dry_run', 'boolean') === true, max: deps.maxReplay };
    requireScope(request);
    const r = await bulkReplay(store.deliveries, request, Date.now());
    if (r.dryRun) {
      ctx.body = { would_replay: r.wouldReplay, max_per_call: r.max, statuses: given };
      return;
    }
    adminLog(ctx, 'deliveries.replay', filter.destinationId ?? filter.scriptId ?? 'all', { ...filter, all: request.all, replayed: r.replayed, left: r.left });
    ctx.body = { replayed: r.replayed, left: r.left, max_per_call: r.max, statuses: given };
  });

  router.post('/deliveries/retry-now', jsonBody(), async function adminRetryNow(ctx: AppContext) {
    const b = ctx.state.body ?? {};
    const filter = { scriptId: field<string>(b, 'script_id', 'string'), destinationId: field<string>(b, 'destination_id', 'string') };
    const all = field<boolean>(b, 'all', 'boolean') === true;
    // Every tenant's waiting retries at once only when asked for in so many words, as a bulk replay.
    requireScope({ filter, all }, 'retry-now');
    const due = await store.deliveries.retryNow(filter, Date.now());
    adminLog(ctx, 'deliveries.retry-now', filter.destinationId ?? filter.scriptId ?? 'all', { ...filter, all, due });
    ctx.body = { due };
  });

  return router;
}
