// The admin API's rules: what serves each (scope, destination), history, stored versions,
// and a draft's check, diff, preview (native requests with the live rules and with the
// draft) and replay (rules-draft-runs.ts: off the HTTP thread, replays one at a time),
// publish, rollback and revert (back to the file or plugin default). Writes go through the rule-versions service, which runs the
// loading checks first; after one, this instance re-reads the store at once (the others
// notice the new revision within a second).
import Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { RuleWatcher } from '../rules/rule-watcher.ts';
import { checkDraft, diffRules, liveDocuments, publishRules, revertRules, rollbackRules, type RuleProblem } from '../rules/rule-versions.ts';
import { DEFAULT_SCOPE } from '../rules/stored-rules.ts';
import type { RuleFile } from '../rules/types.ts';
import type { DraftRunner } from '../pipeline/draft-preview.ts';
import { DEFAULT_REPLAY, MAX_REPLAY, previewThroughDraft, replayThroughDraft } from './rules-draft-runs.ts';
import { validateFor } from '../intake/accept-events.ts';
import type { Metrics } from '../http/metrics.ts';
import type { NativeSchemaOf } from '../destinations/native-schema.ts';
import type { AppContext, AppState } from '../http/types.ts';
import { adminLog, adminName, jsonBody, pageLimit, param } from './admin-params.ts';

export interface RulesAdminDeps {
  store: Store;
  watcher: Pick<RuleWatcher, 'current' | 'refresh' | 'valid' | 'errors'>;
  /** RULES_DIR. */
  dir: string;
  /** Where previews and replays through a draft run (a worker pool in the server). */
  drafts: DraftRunner;
  metrics: Pick<Metrics, 'validationFailures'>;
  /** The destinations' native schemas: a draft's literal output one refuses fails check, preview and publish. */
  nativeSchemaOf?: NativeSchemaOf;
}

type Params = { params: Record<string, string> };

const invalid = (errors: readonly RuleProblem[]) =>
  new AppError('RULES_INVALID', 422, `The rules would not load: ${errors.length} problem${errors.length === 1 ? '' : 's'}, first: ${errors[0]?.path || '(document)'}: ${errors[0]?.message ?? ''}`, { details: { errors } });

const text = (v: unknown, fallback: string, max = 500): string => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : fallback);

export function rulesAdminRouter(deps: RulesAdminDeps): Router<AppState> {
  const { store } = deps;
  const router = new Router<AppState>({ prefix: '/admin/rules' });
  const scopeOf = (ctx: AppContext): string => text(ctx.state.body?.scope ?? param(ctx, 'scope'), DEFAULT_SCOPE, 16);
  const destinationOf = (ctx: AppContext): string => (ctx as AppContext & Params).params.destination;
  const liveOf = async (scope: string, destination: string) =>
    (await liveDocuments(deps.dir, store.rules)).find((d) => d.scope === scope && d.destination === destination) ?? null;
  const draftOf = (ctx: AppContext) => ({ scope: scopeOf(ctx), destination: destinationOf(ctx), document: ctx.state.body?.document });
  const versions = { store: store.rules, dir: deps.dir, nativeSchemaOf: deps.nativeSchemaOf };
  const check = async (ctx: AppContext) => checkDraft({ dir: deps.dir, live: await store.rules.live(), nativeSchemaOf: deps.nativeSchemaOf }, draftOf(ctx));
  const runs = { store, drafts: deps.drafts, live: () => deps.watcher.current() };
  /** A replay through a draft is running on this instance: the next one is refused (409) until it answers. */
  let replaying = false;

  router.get('/', async function adminRules(ctx: AppContext) {
    const docs = await liveDocuments(deps.dir, store.rules);
    ctx.body = {
      items: docs.map((d) => ({
        scope: d.scope, destination: d.destination, source: d.source, version: d.version, file: d.file,
        rules: Array.isArray((d.document as RuleFile | null)?.rules) ? (d.document as RuleFile).rules.length : null,
      })),
      valid: deps.watcher.valid(),
      errors: deps.watcher.errors(),
    };
  });

  router.get('/versions/:version', async function adminRuleVersion(ctx: AppContext) {
    const n = Number((ctx as AppContext & Params).params.version);
    const v = Number.isSafeInteger(n) ? await store.rules.get(n) : null;
    if (!v) throw new AppError('NOT_FOUND', 404, 'No such rule version');
    ctx.body = { version: v.version, scope: v.scope, destination: v.destination, document: v.document, author: v.author, message: v.message, created_at: v.createdAt, live: v.live };
  });

  router.get('/:destination', async function adminRuleDocument(ctx: AppContext) {
    const doc = await liveOf(scopeOf(ctx), destinationOf(ctx));
    if (!doc) throw new AppError('NOT_FOUND', 404, `No rules for ${destinationOf(ctx).slice(0, 64)} in scope ${scopeOf(ctx)}`);
    ctx.body = { scope: doc.scope, destination: doc.destination, source: doc.source, version: doc.version, file: doc.file, document: doc.document };
  });

  router.get('/:destination/history', async function adminRuleHistory(ctx: AppContext) {
    const changes = await store.rules.history({ scope: scopeOf(ctx), destination: destinationOf(ctx), limit: pageLimit(ctx, 100) });
    // Newest first: only the newest change to the live version is what made it live.
    const current = changes.findIndex((c) => c.live);
    ctx.body = { items: changes.map((c, i) => ({ change: c.id, version: c.version, action: c.action, author: c.author, message: c.message, at: c.at, live: i === current })) };
  });

  router.post('/:destination/check', jsonBody(), async function adminRuleCheck(ctx: AppContext) {
    const r = await check(ctx);
    ctx.body = r.ok ? { ok: true, errors: [] } : { ok: false, errors: r.errors };
  });

  router.post('/:destination/diff', jsonBody(), async function adminRuleDiff(ctx: AppContext) {
    const live = await liveOf(scopeOf(ctx), destinationOf(ctx));
    const draft = ctx.state.body?.document;
    if (draft === null || typeof draft !== 'object') throw new AppError('INVALID_BODY', 400, 'document must be a rule file object', { field: 'document' });
    ctx.body = { against: live && { source: live.source, version: live.version }, changes: diffRules((live?.document ?? null) as RuleFile | null, draft as RuleFile) };
  });

  router.post('/:destination/preview', jsonBody(), async function adminRulePreview(ctx: AppContext) {
    const r = await check(ctx);
    if (!r.ok) throw invalid(r.errors);
    const subject = await previewSubject(ctx, deps, scopeOf(ctx));
    const { account } = subject;
    const destinations = (await store.destinations.list(account.scriptId)).filter((d) => d.type === destinationOf(ctx) && d.enabled);
    const { before, after } = await previewThroughDraft(runs, destinationOf(ctx), r.ruleSet, subject, destinations);
    ctx.body = {
      script_id: account.scriptId,
      before, after,
      changed: JSON.stringify(before) !== JSON.stringify(after),
      note: destinations.length === 0 ? `account ${account.scriptId} has no enabled ${destinationOf(ctx)} destination to preview` : undefined,
    };
  });

  // Replay through a draft: the last N accepted events (of the scope's account, or of every
  // account for the defaults) planned with the live rules and with the draft, compared.
  router.post('/:destination/replay', jsonBody(), async function adminRuleReplay(ctx: AppContext) {
    const last = Number(ctx.state.body?.last ?? DEFAULT_REPLAY);
    if (!Number.isSafeInteger(last) || last < 1 || last > MAX_REPLAY) {
      throw new AppError('OUT_OF_RANGE', 400, `last must be between 1 and ${MAX_REPLAY}`, { field: 'last' });
    }
    if (replaying) throw new AppError('CONFLICT', 409, 'A replay through a draft is already running; send this one again once it has answered');
    replaying = true;
    try {
      const r = await check(ctx);
      if (!r.ok) throw invalid(r.errors);
      const scope = scopeOf(ctx);
      const scriptId = scope === DEFAULT_SCOPE ? (typeof ctx.state.body?.script_id === 'string' ? ctx.state.body.script_id : undefined) : scope;
      ctx.body = await replayThroughDraft(runs, destinationOf(ctx), r.ruleSet, { scriptId, last });
    } finally {
      replaying = false;
    }
  });

  router.post('/:destination/publish', jsonBody(), async function adminRulePublish(ctx: AppContext) {
    const author = adminName(ctx);
    const message = text(ctx.state.body?.message, '');
    if (message === '') throw new AppError('REQUIRED_FIELD_MISSING', 400, 'message is required: say what the change does', { field: 'message' });
    const r = await publishRules(versions, { ...draftOf(ctx), author, message }, Date.now());
    if (!r.ok) throw invalid(r.errors);
    await deps.watcher.refresh();
    adminLog(ctx, 'rules.publish', `${r.version.scope}/${r.version.destination}`, { version: r.version.version, message });
    ctx.status = 201;
    ctx.body = { version: r.version.version };
  });

  router.post('/:destination/rollback', jsonBody(), async function adminRuleRollback(ctx: AppContext) {
    const author = adminName(ctx);
    const version = Number(ctx.state.body?.version);
    const target = Number.isSafeInteger(version) ? await store.rules.get(version) : null;
    if (!target || target.destination !== destinationOf(ctx) || target.scope !== scopeOf(ctx)) {
      throw new AppError('NOT_FOUND', 404, `No version ${String(ctx.state.body?.version).slice(0, 20)} of ${destinationOf(ctx).slice(0, 64)} in scope ${scopeOf(ctx)}`);
    }
    const message = text(ctx.state.body?.message, `roll back to version ${version}`);
    const r = await rollbackRules(versions, version, author, message, Date.now());
    if (!r.ok) throw invalid(r.errors);
    await deps.watcher.refresh();
    adminLog(ctx, 'rules.rollback', `${target.scope}/${target.destination}`, { version, message });
    ctx.body = { version: r.version.version };
  });

  router.post('/:destination/revert', jsonBody(), async function adminRuleRevert(ctx: AppContext) {
    const author = adminName(ctx);
    const key = { scope: scopeOf(ctx), destination: destinationOf(ctx) };
    const message = text(ctx.state.body?.message, 'revert to the file or plugin default');
    const r = await revertRules(versions, key, author, message, Date.now());
    if (!r.ok && r.nothingLive) throw new AppError('CONFLICT', 409, r.errors[0].message);
    if (!r.ok) throw invalid(r.errors);
    await deps.watcher.refresh();
    const now = await liveOf(key.scope, key.destination);
    adminLog(ctx, 'rules.revert', `${key.scope}/${key.destination}`, { from_version: r.change.version, message });
    ctx.body = { reverted_from: r.change.version, source: now?.source ?? null, file: now?.file ?? null };
  });

  return router;
}

/** The event a preview runs: a stored one (by tracklane id) or a pasted payload validated for the account. */
async function previewSubject(ctx: AppContext, deps: RulesAdminDeps, scope: string) {
  const body = ctx.state.body ?? {};
  if (typeof body.event_id === 'string' && body.event_id !== '') {
    const [stored] = await deps.store.events.list({ id: body.event_id, limit: 1 });
    if (!stored || stored.status !== 'accepted') throw new AppError('NOT_FOUND', 404, 'event_id must be the tracklane id of an accepted stored event', { field: 'event_id' });
    const account = await deps.store.accounts.get(stored.scriptId);
    if (!account) throw new AppError('NOT_FOUND', 404, 'The event\'s account no longer exists');
    return { account, event: stored.payload as NormalizedEvent, eventId: stored.eventId ?? stored.id, receivedAt: stored.receivedAt };
  }
  const scriptId = typeof body.script_id === 'string' ? body.script_id : scope === DEFAULT_SCOPE ? '' : scope;
  const account = scriptId === '' ? null : await deps.store.accounts.get(scriptId);
  if (!account) throw new AppError('NOT_FOUND', 404, 'A pasted payload needs script_id (an existing account) when the scope is default', { field: 'script_id' });
  if (body.payload === null || typeof body.payload !== 'object') {
    throw new AppError('REQUIRED_FIELD_MISSING', 400, 'Give event_id (a stored event) or payload (an event as POSTed to the intake)', { field: 'payload' });
  }
  const result = validateFor(account, body.payload, deps.metrics);
  if (result.errors.length > 0 || !result.event) {
    throw new AppError('INVALID_BODY', 400, `The payload is not a valid event: ${result.errors.map((e) => `${e.field}: ${e.message}`).join('; ').slice(0, 500)}`, { field: 'payload' });
  }
  const ev = (body.payload as { event?: { id?: unknown } }).event;
  return { account, event: result.event, eventId: typeof ev?.id === 'string' ? ev.id : 'preview', receivedAt: Date.now() };
}
