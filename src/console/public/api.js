// The admin API client: the bearer token from this tab's sessionStorage on every call,
// errors as ApiError, a 401 anywhere sends the operator back to the token form.

const KEY = 'tracklane.adminToken';
let onUnauthorized = () => {};

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

/** Called (with a message) whenever the API answers 401. */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

export class ApiError extends Error {
  /** `body`: the error response as parsed JSON (whatever its shape), or undefined. */
  constructor(status, code, message, details, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.body = body;
  }
}

function headers(extra = {}) {
  const t = token.get();
  return { ...(t ? { authorization: `Bearer ${t}` } : {}), ...extra };
}

/** A query string from an object, leaving out empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

const text = (v) => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Code, message and details of an error body in any of the service's shapes: the admin API's
 * {error: {code, message}}, a custom endpoint's {messages, error_code, error_context}, the
 * standard family's {message, errors: [{code}]} and the ack family's {errors: ['CODE: …']}.
 */
export function errorFields(body) {
  if (!body || typeof body !== 'object') return {};
  if (body.error && typeof body.error === 'object') return { code: text(body.error.code), message: text(body.error.message), details: body.error.details };
  const messages = Array.isArray(body.messages) ? body.messages.filter((m) => typeof m === 'string') : [];
  const first = Array.isArray(body.errors) ? body.errors[0] : undefined;
  return {
    code: text(body.error_code) ?? text(first?.code) ?? text(typeof first === 'string' ? /^([A-Z_]+):/.exec(first)?.[1] : undefined),
    message: (messages.length > 0 ? messages.join('; ') : undefined) ?? text(body.message) ?? text(first?.message) ?? text(first),
    details: body.error_context ?? (Array.isArray(body.errors) ? body.errors : undefined),
  };
}

async function failure(res) {
  let body;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const { code, message, details } = errorFields(body);
  const err = new ApiError(res.status, code ?? `HTTP_${res.status}`, message ?? `${res.status} ${res.statusText}`, details, body);
  if (res.status === 401) {
    token.clear();
    onUnauthorized('The admin token was refused (401). Enter it again.');
  }
  return err;
}

/** Calls the admin API; resolves to the parsed JSON, rejects with ApiError. */
export async function api(path, { method = 'GET', body, signal } = {}) {
  // Every change goes as application/json (the admin API refuses any other type): no body is {}.
  const changes = method !== 'GET';
  const res = await fetch(path, {
    method,
    headers: headers(changes ? { 'content-type': 'application/json' } : {}),
    body: changes ? JSON.stringify(body ?? {}) : undefined,
    signal,
    cache: 'no-store',
  });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** Opens a text/event-stream with the bearer header; resolves to the Response (body unread). */
export async function openStream(path, signal) {
  const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), signal, cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  return res;
}

/**
 * Reads Server-Sent Events from a fetch Response body; calls onMessage({event, data, id})
 * per message. Resolves when the stream ends.
 */
export async function readEvents(res, onMessage) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let msg = { event: 'message', data: [], id: undefined };
  const dispatch = () => {
    if (msg.data.length > 0) onMessage({ event: msg.event, data: msg.data.join('\n'), id: msg.id });
    msg = { event: 'message', data: [], id: undefined };
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      if (buf[nl] === '\r' && nl === buf.length - 1) break; // a \r\n split across chunks
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        dispatch();
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'event') msg.event = val;
      else if (field === 'data') msg.data.push(val);
      else if (field === 'id') msg.id = val;
    }
  }
}

let toastTimer;
/** Shows a message in #toast for a few seconds. */
export function toast(message, kind = 'error') {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, kind === 'error' ? 8000 : 3000);
}

/** Reports an API failure in the toast (a 401 is already handled by the token form). */
export function report(err) {
  if (err?.name === 'AbortError') return;
  if (err instanceof ApiError && err.status === 401) return;
  toast(err instanceof ApiError ? `${err.message} (${err.code})` : String(err?.message ?? err));
}
