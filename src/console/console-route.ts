// The operator console: a static page set (src/console/public/) served at /console.
// The files are a fixed allow-list read once when the router is built; a request path is
// only ever looked up in that list, never joined onto a directory. The page holds no data
// and no secret: it asks the operator for ADMIN_TOKEN and calls /admin/* with it.
// Without ADMIN_TOKEN (enabled: false) every /console path answers 404.
import Router from '@koa/router';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../build-state.cjs';
import type { AppContext, AppState } from '../http/types.ts';

// From the sources whether this module is one (tsx) or the build's copy in dist/, which holds no page files.
const PUBLIC_DIR = pathToFileURL(join(projectRoot(import.meta.url), 'src/console/public/'));

const TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
} as const;

/** Every file the console serves: URL path → file name in public/ and content type. */
export const CONSOLE_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/console': { file: 'index.html', type: TYPES.html },
  '/console/console.css': { file: 'console.css', type: TYPES.css },
  '/console/console.js': { file: 'console.js', type: TYPES.js },
  '/console/api.js': { file: 'api.js', type: TYPES.js },
  '/console/dom.js': { file: 'dom.js', type: TYPES.js },
  '/console/live.js': { file: 'live.js', type: TYPES.js },
  '/console/trace.js': { file: 'trace.js', type: TYPES.js },
  '/console/destinations.js': { file: 'destinations.js', type: TYPES.js },
  '/console/rules.js': { file: 'rules.js', type: TYPES.js },
  '/console/json-position.js': { file: 'json-position.js', type: TYPES.js },
  '/console/custom.js': { file: 'custom.js', type: TYPES.js },
  '/console/editor-gutter.js': { file: 'editor-gutter.js', type: TYPES.js },
  '/console/line-diff.js': { file: 'line-diff.js', type: TYPES.js },
  '/console/delivery-actions.js': { file: 'delivery-actions.js', type: TYPES.js },
  '/console/accounts.js': { file: 'accounts.js', type: TYPES.js },
};

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function secure(ctx: AppContext): void {
  ctx.state.route = 'console';
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

function notFound(ctx: AppContext, message: string): void {
  secure(ctx);
  ctx.status = 404;
  ctx.body = { error: { code: 'NOT_FOUND', message } };
}

export function consoleRouter(opts: { enabled: boolean }): Router<AppState> {
  const router = new Router<AppState>();
  if (opts.enabled) {
    for (const [path, { file, type }] of Object.entries(CONSOLE_FILES)) {
      const body = readFileSync(new URL(file, PUBLIC_DIR));
      router.get(path, function serveConsoleFile(ctx: AppContext) {
        secure(ctx);
        ctx.type = type;
        ctx.body = body;
      });
    }
  }
  const message = opts.enabled ? 'No such console file' : 'The console is off: set ADMIN_TOKEN to turn it on';
  router.all('/console{/*rest}', function consoleNotFound(ctx: AppContext) {
    notFound(ctx, message);
  });
  return router;
}
