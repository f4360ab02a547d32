// Reads the body with koa-bodyparser (size limit enforced while streaming, gzip
// counted after inflation) and runs the JSON-safety walk before anything else.
import bodyParser from 'koa-bodyparser';
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import { checkJsonSafety, type JsonLimits, DEFAULT_JSON_LIMITS } from './json-safety.ts';
import type { AppContext } from './types.ts';

interface ParserError extends Error {
  status?: number;
  type?: string;
  /** co-body attaches the text it failed to parse. */
  body?: unknown;
}

function translate(err: ParserError): AppError {
  if (err.status === 413 || err.type === 'entity.too.large') {
    return new AppError('PAYLOAD_TOO_LARGE', 413, 'The body is larger than the limit');
  }
  if (err.status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported Content-Encoding');
  if (/prototype/i.test(err.message)) {
    return new AppError('INVALID_BODY', 400, 'The body contains a forbidden key (__proto__)', { field: '__proto__' });
  }
  if (err.type === 'request.size.invalid' || err.type === 'request.aborted') {
    return new AppError('INVALID_BODY', 400, 'The body did not match its Content-Length');
  }
  if (err.status === 400 && typeof err.body === 'string' && err.body.trim() === '') {
    return new AppError('INVALID_BODY', 400, 'The body is empty; send a JSON object');
  }
  if (err.status === 400) return new AppError('INVALID_JSON', 400, 'The body is not valid JSON');
  return new AppError('INVALID_BODY', 400, 'The body could not be read');
}

/** `limits: false` leaves the safety walk to the route (batch intake walks each event on its own). */
export function readJsonBody(opts: { maxBodyBytes: number; limits?: JsonLimits | false }) {
  const limits = opts.limits ?? DEFAULT_JSON_LIMITS;
  // onProtoPoisoning goes through to co-body, the parser underneath (not in koa-bodyparser's types).
  const parse = bodyParser(<bodyParser.Options & { onProtoPoisoning: 'error' | 'ignore' }>{
    enableTypes: ['json'],
    jsonLimit: `${opts.maxBodyBytes}b`,
    strict: false,
    // JSON.parse keeps a "__proto__" key as a plain own property, and the safety walk below
    // refuses it (with constructor and prototype) before anything else touches the body, so
    // the parser's own second scan of the text for it is skipped; without the walk it stays.
    onProtoPoisoning: limits === false ? 'error' : 'ignore',
  });
  return async function readJsonBodyMiddleware(ctx: AppContext, next: Next): Promise<void> {
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      throw translate(err as ParserError);
    }
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (typeof raw !== 'string' || raw.trim() === '') throw new AppError('INVALID_BODY', 400, 'The body is empty; send a JSON object');
    const body: unknown = ctx.request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError('INVALID_BODY', 400, 'The body must be a JSON object');
    }
    const problem = limits === false ? null : checkJsonSafety(body, limits);
    if (problem) throw new AppError('INVALID_BODY', 400, problem.message, { field: problem.field });
    ctx.state.body = body as Record<string, unknown>;
    ctx.state.rawBody = raw;
    await next();
  };
}
