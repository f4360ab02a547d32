// The admin API's read views and operator actions (docs/admin.md): accounts, events with
// filters and pages, one event traced to the wire, the live intake stream, destination
// health with resume, delivery replay, and the custom endpoints with a test-mode run.
// Behind adminGate (admin-auth.ts); every POST is logged as an `admin change`.
import Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import type { EventStatus } from '../domain/records.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { maskSettings } from '../destinations/destination-service.ts';
import type { CustomerRegistry } from '../customers/types.ts';
import { listEndpoints } from '../customers/load-customers.ts';
import { endpointUsageJson } from '../customers/describe-endpoint.ts';
import { runEndpointTest } from '../customers/custom-routes.ts';
import type { ProcessDeps } from '../customers/process-request.ts';
import type { AppContext, AppState } from '../http/types.ts';
import { eventListItem, traceEvent } from './trace.ts';
import { maskTraceIdentifiers } from './mask-identifiers.ts';
import type { EventStreams } from './event-stream.ts';
import { adminLog, adminRevealLog, intParam, jsonBody, pageLimit, param } from './admin-params.ts';
import { isLagging, overdueMs } from '../delivery/lagging.ts';
import type { Remap } from '../delivery/remap.ts';
import { encodeCursor, pageCursor } from './page-cursor.ts';

export interface AdminDeps {
  store: Store;
  plugins: PluginRegistry;
  streams: EventStreams;
  customers?: { registry: CustomerRegistry; process: ProcessDeps };
  /** Rule problems for the overview. */
  rulesState: () => { valid: boolean; errors: readonly unknown[] };
  /** Maps a delivered delivery again, for a trace to show the body its successful attempt sent (kept as a digest only). */
  remap?: Remap;
}

const EVENT_STATUSES: readonly EventStatus[] = ['accepted', 'rejected', 'duplicate'];

function status(ctx: AppContext): EventStatus | undefined {
  const s = param(ctx, 'status');
  if (s !== undefined && !(EVENT_STATUSES as readonly string[]).includes(s)) {
    throw new AppError('INVALID_VALUE', 400, `status must be one of ${EVENT_STATUSES.join(', ')}`, { field: 'status' });
  }
  return s as EventStatus | undefined;
}

export function adminRouter(deps: AdminDeps): Router<AppState> {
  const { store } = deps;
  const router = new Router<AppState>({ prefix: '/admin' });

  router.get('/overview', async function adminOverview(ctx: AppContext) {
    const [accounts, stats, queue] = await Promise.all([store.accounts.list(), store.deliveries.stats(), store.deliveries.queueSnapshot()]);
    const rules = deps.rulesState();
    ctx.body = {
      accounts: accounts.length,
      destinations: stats.filter((s) => !s.removed).length,
      dispatch_backlog: queue.dispatchBacklog,
      paused_destinations: queue.pausedDestinations,
      pending_by_type: queue.byType.map((t) => ({ type: t.destinationType, pending: t.pending, oldest_pending_at: t.oldestPendingAt })),
      rules: { valid: rules.valid, errors: rules.errors },
    };
  });

  router.get('/accounts', async function adminAccounts(ctx: AppContext) {
    const accounts = await store.accounts.list();
    ctx.body = {
      items: accounts.map((a) => ({
        script_id: a.scriptId, name: a.name, tier: a.tier, addon: a.addon, enabled: a.enabled, customer: a.customer,
        host: a.host, country: a.country, created_at: a.createdAt,
      })),
    };
  });

  router.get('/events', async function adminEvents(ctx: AppContext) {
    const limit = pageLimit(ctx);
    // Summaries: the database counts each event's issues; no payload is read or parsed here.
    const rows = await store.events.summaries({
      scriptId: param(ctx, 'script_id'),
      status: status(ctx),
      name: param(ctx, 'name'),
      search: param(ctx, 'event_id'),
      since: intParam(ctx, 'since'),
      until: intParam(ctx, 'until'),
      beforeSeq: pageCursor(ctx),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    ctx.body = { items: page.map(eventListItem), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null };
  });

  router.get('/events/:id', async function adminEvent(ctx: AppContext) {
    const id = (ctx as AppContext & { params: { id: string } }).params.id;
    const [event] = await store.events.list({ id, limit: 1 });
    const reveal = param(ctx, 'reveal');
    if (reveal !== undefined && reveal !== 'identifiers') throw new AppError('INVALID_VALUE', 400, 'reveal must be identifiers', { field: 'reveal' });
    if (!event) throw new AppError('NOT_FOUND', 404, `No stored event with id ${id.slice(0, 64)}`);
    const trace = await traceEvent(store, deps, event);
    if (reveal === undefined) return void (ctx.body = maskTraceIdentifiers(trace));
    adminRevealLog(ctx, 'event.identifiers', event.id);
    ctx.body = { ...trace, identifiers: 'revealed' };
  });

  router.get('/trace', async function adminTrace(ctx: AppContext) {
    const q = param(ctx, 'q')?.trim();
    if (!q) throw new AppError('REQUIRED_FIELD_MISSING', 400, 'q is required: a tracklane id or an event.id (for orders, the order number)', { field: 'q' });
    const rows = await store.events.summaries({ search: q, scriptId: param(ctx, 'script_id'), limit: 20 });
    ctx.body = { items: rows.map(eventListItem) };
  });

  router.get('/stream', function adminStream(ctx: AppContext) {
    ctx.state.route = 'admin_stream';
    deps.streams.open(ctx, { scriptId: param(ctx, 'script_id'), status: status(ctx), name: param(ctx, 'name') });
  });

  router.get('/destinations', async function adminDestinations(ctx: AppContext) {
    const scriptId = param(ctx, 'script_id');
    const stats = (await store.deliveries.stats(scriptId)).filter((s) => !s.removed);
    const records = new Map<string, Record<string, unknown>>();
    for (const sid of new Set(stats.map((s) => s.scriptId))) {
      for (const d of await store.destinations.list(sid)) records.set(d.id, d.settings);
    }
    const now = Date.now();
    const items = await Promise.all(stats.map(async (s) => {
      const recent = await store.deliveries.list({ destinationId: s.destinationId, limit: 20 });
      const secret = deps.plugins.get(s.type)?.plugin.secretSettings ?? [];
      return {
        id: s.destinationId, script_id: s.scriptId, type: s.type, name: s.name, enabled: s.enabled,
        settings: maskSettings(records.get(s.destinationId) ?? {}, secret),
        counts: s.counts,
        oldest_pending_at: s.oldestPendingAt,
        overdue_seconds: Math.round(overdueMs(s.nextDueAt, now) / 1000),
        lagging: isLagging({ enabled: s.enabled, paused: s.health?.pausedAt != null, nextDueAt: s.nextDueAt }, now),
        paused_at: s.health?.pausedAt ?? null,
        pause_reason: s.health?.pauseReason ?? null,
        last_success_at: s.health?.lastSuccessAt ?? null,
        last_error: recent.find((d) => d.lastError !== null)?.lastError ?? null,
      };
    }));
    ctx.body = { items };
  });

  router.post('/destinations/:id/resume', async function adminResume(ctx: AppContext) {
    const id = (ctx as AppContext & { params: { id: string } }).params.id;
    if (!(await store.destinations.find(id))) throw new AppError('NOT_FOUND', 404, `No destination with id ${id.slice(0, 64)}`);
    const r = await store.deliveries.resume(id, Date.now());
    adminLog(ctx, 'destination.resume', id, r);
    ctx.body = { was_paused: r.wasPaused, due: r.due };
  });

  router.post('/deliveries/:id/replay', jsonBody(), async function adminReplay(ctx: AppContext) {
    const raw = (ctx as AppContext & { params: { id: string } }).params.id;
    const id = Number(raw);
    const force = ctx.state.body?.force === true;
    const [d] = Number.isSafeInteger(id) ? await store.deliveries.list({ id, limit: 1 }) : [];
    if (!d) throw new AppError('NOT_FOUND', 404, `No delivery with id ${raw.slice(0, 32)}`);
    if (d.status === 'pending') throw new AppError('CONFLICT', 409, 'The delivery is pending: it is sent (or retried) without a replay');
    if (d.status === 'skipped') throw new AppError('CONFLICT', 409, `The delivery was skipped (${d.skipReason ?? 'no reason'}): there is nothing to send`);
    if (d.status === 'delivered' && !force) {
      throw new AppError('CONFLICT', 409, 'The delivery was delivered; replaying sends it again: pass {"force": true} to do that deliberately');
    }
    const replayed = await store.deliveries.replay({ deliveryId: id, statuses: [d.status] }, Date.now());
    if (replayed === 0) throw new AppError('CONFLICT', 409, 'The delivery cannot be replayed (its event or destination is gone)');
    adminLog(ctx, 'delivery.replay', String(id), { from: d.status, force });
    ctx.body = { replayed };
  });

  router.get('/customers', async function adminCustomers(ctx: AppContext) {
    const registry = deps.customers?.registry;
    if (!registry) return void (ctx.body = { items: [] });
    const [accounts, usage] = await Promise.all([store.accounts.list(), deps.customers!.process.records.listUsage()]);
    ctx.body = {
      items: listEndpoints(registry).map((ep) => ({
        ...endpointUsageJson(ep, usage, accounts),
        accounts: accounts.filter((a) => a.customer === ep.customer).map((a) => a.scriptId),
        example: ep.example,
        examples: Object.fromEntries([...ep.versions.values()].map((v) => [String(v.version), v.example])),
      })),
    };
  });

  router.post('/customers/:customer/endpoints/:endpoint/test', jsonBody(), async function adminCustomTest(ctx: AppContext) {
    const { customer, endpoint } = (ctx as AppContext & { params: { customer: string; endpoint: string } }).params;
    const ep = deps.customers?.registry.get(customer)?.get(endpoint);
    if (!ep || !deps.customers) throw new AppError('NOT_FOUND', 404, `No custom endpoint ${customer.slice(0, 64)}/${endpoint.slice(0, 64)} is loaded`);
    const scriptId = typeof ctx.state.body?.script_id === 'string' ? ctx.state.body.script_id : '';
    const account = scriptId === '' ? null : await store.accounts.get(scriptId);
    if (!account || account.customer !== customer) {
      throw new AppError('NOT_FOUND', 404, `script_id must name an account bound to customer ${customer.slice(0, 64)}`, { field: 'script_id' });
    }
    const rawVersion = ctx.state.body?.version;
    const version = rawVersion === undefined || rawVersion === null ? undefined : String(rawVersion);
    await runEndpointTest(deps.customers.process, ctx, ep, account, ctx.state.body?.body, version);
  });

  return router;
}
