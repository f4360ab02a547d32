// Endpoint 2's `?validate=platform`: each previewed destination's validation requests (its
// plugin's `validationRequests`, built off the HTTP thread with the real settings) are sent
// to the platform's validation path and its answer is read by the plugin's classifyResponse,
// as a delivery's would be: success is `valid`, permanent `invalid` (with the platform's
// messages), retryable or a transport failure `error`, no answer within the budget `timeout`.
// Sent by the delivery's own sender — address checks (ALLOW_PRIVATE_DESTINATIONS), no
// redirects, capped bodies, `User-Agent: tracklane/<version>` — and, for OAuth settings, with
// a token from a token cache of its own, as a lane sends. Nothing here is stored.
import type { LoadedPlugin, PluginRegistry } from '../destinations/load-plugins.ts';
import type { Classification, DestinationPlugin, OutboundRequest } from '../destinations/types.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { DestinationPreview, PlatformCheck, PlatformValidation } from '../pipeline/preview-event.ts';
import { createHttpSender, type HttpSender, type SendResult } from './http-sender.ts';
import { sendForDestination } from './oauth/authorized-send.ts';
import { createTokenCache, type TokenCache } from './oauth/token-cache.ts';

/** The longest one validation request may take, token exchange included. */
export const VALIDATE_BUDGET_MS = 3_000;

/** Messages kept per request, and characters per message. */
const MAX_MESSAGES = 10;
const MAX_MESSAGE_CHARS = 500;

type RequestValidation = PlatformValidation['requests'][number];

export interface PlatformChecker {
  /** Sets `validation` on each previewed destination that has a check (`checks[i]` for `preview[i]`). */
  validate(preview: DestinationPreview[], checks: readonly (PlatformCheck | null)[], destinations: readonly DestinationRecord[]): Promise<void>;
  /** Closes its connections. */
  close(): Promise<void>;
}

export interface PlatformCheckerOptions {
  plugins: PluginRegistry;
  /** ALLOW_PRIVATE_DESTINATIONS=1: loopback and private addresses may be dialled. */
  allowPrivate: boolean;
  /** Default VALIDATE_BUDGET_MS. */
  budgetMs?: number;
}

/**
 * @example
 * const checker = createPlatformChecker({ plugins, allowPrivate: config.allowPrivateDestinations });
 * await checker.validate(feedback.preview, feedback.checks, destinations); // preview[i].validation set
 */
export function createPlatformChecker(opts: PlatformCheckerOptions): PlatformChecker {
  const budgetMs = opts.budgetMs ?? VALIDATE_BUDGET_MS;
  // Made on first use: a server nobody asks to validate opens nothing.
  let sender: HttpSender | undefined;
  let tokens: TokenCache | undefined;
  const senderOf = () => (sender ??= createHttpSender({ allowPrivate: opts.allowPrivate, totalTimeoutMs: budgetMs }));
  const tokensOf = () => (tokens ??= createTokenCache({ send: (req) => senderOf().send(req) }));

  /** One validation request within the budget, token exchange included. */
  async function sendOne(dest: DestinationRecord, plugin: DestinationPlugin, request: OutboundRequest): Promise<RequestValidation> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => {
        abort.abort();
        resolve('late');
      }, budgetMs);
    });
    const send = (req: OutboundRequest) => senderOf().send(req, abort.signal, Math.max(1, budgetMs - elapsed()));
    try {
      const sent = await Promise.race([sendForDestination(tokensOf(), dest, plugin, request, send), late]);
      if (sent === 'late' || abort.signal.aborted) return timedOut(budgetMs, elapsed());
      return verdictOf(sent.result, plugin);
    } finally {
      clearTimeout(timer);
    }
  }

  async function check(dest: DestinationRecord, loaded: LoadedPlugin | undefined, c: PlatformCheck): Promise<PlatformValidation> {
    if ('unavailable' in c) return { verdict: 'not_available', messages: [c.unavailable], requests: [] };
    if ('failed' in c || loaded === undefined) {
      const message = 'failed' in c ? c.failed : `${dest.type}: no plugin of this type is loaded`;
      return { verdict: 'error', messages: [message], requests: [] };
    }
    const requests = await Promise.all(c.requests.map((r) => sendOne(dest, loaded.plugin, r)));
    return { verdict: worst(requests), messages: requests.flatMap((r) => r.messages), requests };
  }

  return {
    async validate(preview, checks, destinations) {
      const byId = new Map(destinations.map((d) => [d.id, d]));
      await Promise.all(preview.map(async (p, i) => {
        const c = checks[i];
        const dest = byId.get(p.destination_id);
        if (c === null || c === undefined || dest === undefined) return;
        p.validation = await check(dest, opts.plugins.get(dest.type), c);
      }));
    },
    async close() {
      await sender?.close();
    },
  };
}

function verdictOf(result: SendResult, plugin: DestinationPlugin): RequestValidation {
  if (result.kind === 'error') {
    return { verdict: result.errorClass === 'timeout' ? 'timeout' : 'error', messages: [result.message], status: null, latency_ms: result.latencyMs };
  }
  const c = plugin.classifyResponse(result.response);
  const status = result.response.status;
  const invalid = [
    ...(c.outcome === 'permanent' ? [c.message] : []),
    ...(c.events ?? []).filter((e) => e.outcome === 'permanent').map((e) => e.message),
  ];
  if (invalid.length > 0) return { verdict: 'invalid', messages: bounded(invalid), status, latency_ms: result.latencyMs };
  const notNow = [c, ...(c.events ?? [])].filter((e) => e.outcome === 'retryable').map((e) => e.message ?? '');
  if (notNow.length > 0) return { verdict: 'error', messages: bounded(notNow), status, latency_ms: result.latencyMs };
  return { verdict: 'valid', messages: bounded(noteOf(c)), status, latency_ms: result.latencyMs };
}

/** What a valid answer still said (a note such as "already recorded"), if anything. */
function noteOf(c: Classification): string[] {
  return c.message === undefined || c.message === '' ? [] : [c.message];
}

function timedOut(budgetMs: number, latencyMs: number): RequestValidation {
  return { verdict: 'timeout', messages: [`no answer within ${budgetMs / 1000} s`], status: null, latency_ms: latencyMs };
}

const RANK = { invalid: 0, error: 1, timeout: 2, valid: 3 } as const;

/** The destination's verdict: its worst request's. */
function worst(requests: RequestValidation[]): PlatformValidation['verdict'] {
  return requests.reduce<RequestValidation['verdict']>((w, r) => (RANK[r.verdict] < RANK[w] ? r.verdict : w), 'valid');
}

function bounded(messages: string[]): string[] {
  return messages.filter((m) => m !== '').slice(0, MAX_MESSAGES).map((m) => m.slice(0, MAX_MESSAGE_CHARS));
}
