// Reads the body as text: the common request (plain application/json, a declared length, no
// content coding) straight from the socket (readPlain), any other with koa-bodyparser (size
// limit enforced while streaming, gzip and deflate counted after inflation). Then it refuses text nested too deep before JSON.parse builds it,
// then runs the JSON-safety walk before anything else touches the body.
import bodyParser from 'koa-bodyparser';
import type { IncomingMessage } from 'node:http';
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import { checkJsonSafety, type JsonLimits, DEFAULT_JSON_LIMITS } from './json-safety.ts';
import { nestedDeeperThan } from './json-depth.ts';
import type { AppContext } from './types.ts';

/**
 * The encodings docs/api.md promises, by the name the inflater knows them under; the parser
 * underneath would also inflate brotli. Content-coding names are case-insensitive (RFC 9110
 * §8.4.1), and `x-gzip` is to be read as `gzip` (§8.4.1.3); any other name is refused.
 */
const SUPPORTED_ENCODINGS: ReadonlyMap<string, string> = new Map([
  ['', 'identity'],
  ['identity', 'identity'],
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'],
  ['deflate', 'deflate'],
]);

interface ReaderError extends Error {
  status?: number;
  type?: string;
}

function translate(err: ReaderError): AppError {
  if (err.status === 413 || err.type === 'entity.too.large') {
    return new AppError('PAYLOAD_TOO_LARGE', 413, 'The body is larger than the limit');
  }
  if (err.status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported Content-Encoding');
  if (err.type === 'request.size.invalid' || err.type === 'request.aborted') {
    return new AppError('INVALID_BODY', 400, 'The body did not match its Content-Length');
  }
  return new AppError('INVALID_BODY', 400, 'The body could not be read');
}

export interface ReadJsonBodyOptions {
  maxBodyBytes: number;
  /** The walk over the parsed body; `false` leaves it to the route (batch intake walks each event on its own). */
  limits?: JsonLimits | false;
  /** Deepest nesting the text may have, refused before it is parsed; default: the walk's maxDepth. */
  maxDepth?: number;
  /** Runs on the text as soon as it is read, before any scan of it; throws to refuse it. */
  afterRead?: (ctx: AppContext, raw: string) => void;
  /** Runs on the text once its depth is checked, before it is parsed; throws to refuse it. */
  beforeParse?: (raw: string) => void;
}

const DIGITS = /^\d+$/;

/** One plain body being read: what readPlain's listeners share, kept on the request they listen to. */
interface PlainRead {
  length: number;
  limit: number;
  chunks: Buffer[];
  received: number;
  complete: boolean;
  resolve: (text: string) => void;
  reject: (err: ReaderError) => void;
}

/** Where a request being read by readPlain keeps its PlainRead (its listeners run with the request as `this`). */
const PLAIN_READ = Symbol('plain read');
type ReadingRequest = IncomingMessage & { [PLAIN_READ]?: PlainRead };

/**
 * The body of a plain request (identity coding, its length declared) as UTF-8 text, as the
 * parser underneath reads it, without its layers (co-body, inflation, iconv-lite's decoder:
 * a tenth of endpoint 1's HTTP thread): refused the same way, with errors of the same status
 * and type (413 over `limit`, 400 when the bytes do not match the length or the client
 * aborts), a leading byte-order mark dropped, the stream halted on a refusal. The listeners
 * are module functions that find the read on the request: no closures made per request.
 */
function readPlain(req: IncomingMessage, length: number, limit: number): Promise<string> {
  if (length > limit) return Promise.reject(readerError('request entity too large', 413, 'entity.too.large'));
  return new Promise((resolve, reject) => {
    (req as ReadingRequest)[PLAIN_READ] = { length, limit, chunks: [], received: 0, complete: false, resolve, reject };
    req.on('aborted', onPlainAborted).on('close', cleanupPlain).on('data', onPlainData).on('end', onPlainEnd).on('error', onPlainEnd);
  });
}

/** Removes readPlain's listeners from `req`. */
function cleanupPlain(this: IncomingMessage): void {
  this.off('aborted', onPlainAborted).off('data', onPlainData).off('end', onPlainEnd).off('error', onPlainEnd).off('close', cleanupPlain);
}

/** Settles `req`'s read once: its text, or a refusal that halts the stream. */
function finishPlain(req: ReadingRequest, read: PlainRead, err: ReaderError | null, text?: string): void {
  if (read.complete) return;
  read.complete = true;
  req[PLAIN_READ] = undefined;
  cleanupPlain.call(req);
  if (err === null) return read.resolve(text!);
  req.unpipe();
  req.pause();
  read.reject(err);
}

function onPlainAborted(this: ReadingRequest): void {
  const read = this[PLAIN_READ];
  if (read !== undefined) finishPlain(this, read, readerError('request aborted', 400, 'request.aborted'));
}

function onPlainData(this: ReadingRequest, chunk: Buffer): void {
  const read = this[PLAIN_READ];
  if (read === undefined || read.complete) return;
  read.received += chunk.length;
  if (read.received > read.limit) finishPlain(this, read, readerError('request entity too large', 413, 'entity.too.large'));
  else read.chunks.push(chunk);
}

function onPlainEnd(this: ReadingRequest, err?: ReaderError): void {
  const read = this[PLAIN_READ];
  if (read === undefined || read.complete) return;
  if (err) return finishPlain(this, read, err);
  if (read.received !== read.length) return finishPlain(this, read, readerError('request size did not match content length', 400, 'request.size.invalid'));
  const { chunks } = read;
  const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, read.received)).toString('utf8');
  finishPlain(this, read, null, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
}

/** An error as the parser underneath raises it: translate() reads its status and type. */
const readerError = (message: string, status: number, type: string): ReaderError => Object.assign(new Error(message), { status, type });

export function readJsonBody(opts: ReadJsonBodyOptions) {
  const limits = opts.limits ?? DEFAULT_JSON_LIMITS;
  const maxDepth = opts.maxDepth ?? (limits === false ? DEFAULT_JSON_LIMITS : limits).maxDepth;
  // Read as text: the depth is measured before the text is parsed. JSON.parse keeps a
  // "__proto__" key as a plain own property, which the walk (or the route's) refuses.
  const read = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    textLimit: `${opts.maxBodyBytes}b`,
  });
  return async function readJsonBodyMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const encoding = ctx.get('content-encoding').trim().toLowerCase();
    const coding = SUPPORTED_ENCODINGS.get(encoding);
    if (coding === undefined) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, `Content-Encoding ${encoding.slice(0, 32)} is not supported; send the body as it is, gzip or deflate`);
    }
    // The inflater underneath matches the header's exact bytes ("GZIP" would be refused), so
    // it is handed the canonical name; the length check it applies to `identity` stays.
    ctx.req.headers['content-encoding'] = coding;
    const declared = ctx.req.headers['content-length'];
    const plain = coding === 'identity' && declared !== undefined && DIGITS.test(declared) && ctx.req.headers['content-type'] === 'application/json' &&
      ctx.request.body === undefined && ctx.req.readable && !ctx.req.readableEncoding;
    try {
      if (plain) (ctx.request as { rawBody?: string }).rawBody = await readPlain(ctx.req, Number(declared), opts.maxBodyBytes);
      else await read(ctx, async () => {});
    } catch (err) {
      throw translate(err as ReaderError);
    }
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (typeof raw === 'string') opts.afterRead?.(ctx, raw);
    if (typeof raw !== 'string' || raw.trim() === '') throw new AppError('INVALID_BODY', 400, 'The body is empty; send a JSON object');
    if (nestedDeeperThan(raw, maxDepth)) throw new AppError('INVALID_BODY', 400, `the body is nested deeper than ${maxDepth} levels`);
    opts.beforeParse?.(raw);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new AppError('INVALID_JSON', 400, 'The body is not valid JSON');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError('INVALID_BODY', 400, 'The body must be a JSON object');
    }
    const problem = limits === false ? null : checkJsonSafety(body, limits);
    if (problem) throw new AppError('INVALID_BODY', 400, problem.message, { field: problem.field });
    ctx.request.body = body;
    ctx.state.body = body as Record<string, unknown>;
    ctx.state.rawBody = raw;
    await next();
  };
}
