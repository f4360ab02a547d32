// Hot reload of RULES_DIR: a recursive fs.watch for speed plus a cheap stat poll as the
// safety net (missed events, editors' rename-on-save, a directory created later). Every
// change reloads the whole set; an invalid set is logged and refused, the last good one stays.
import { watch, readdirSync, statSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { formatRuleError, loadRules, type LoadRulesOptions, type RuleLoadError } from './load-rules.ts';
import { createRuleSet, type RuleSet } from './rule-set.ts';

/** The pino subset used here. */
export interface WatcherLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type ReloadEvent =
  | { ok: true; ruleSet: RuleSet; files: number; rules: number }
  | { ok: false; errors: readonly RuleLoadError[] };

export interface RuleWatcherOptions extends LoadRulesOptions {
  dir: string;
  logger: WatcherLogger;
  /** Quiet time after the last change before reloading; default 100 ms. */
  debounceMs?: number;
  /** Interval of the stat poll; default 500 ms. 0 turns the poll off. */
  pollMs?: number;
  /** Use fs.watch; default true. False leaves the poll alone to notice changes. */
  watch?: boolean;
}

export interface RuleWatcher {
  /** The last valid rule set. */
  current(): RuleSet;
  /** Errors of the last reload attempt if it was refused; empty once a reload succeeds. */
  errors(): readonly RuleLoadError[];
  /**
   * Whether a valid rule set has ever loaded. False only when the rules were invalid at
   * start and have not been fixed since: `current()` is then empty, and the server keeps
   * delivery waiting (events are accepted and queued) until they are.
   */
  valid(): boolean;
  /** Reloads now (also what a change triggers). */
  reload(): ReloadEvent;
  /** Called after every reload attempt; returns an unsubscribe function. */
  onReload(listener: (e: ReloadEvent) => void): () => void;
  close(): void;
}

/** Thrown by startRuleWatcher when the rules are invalid at start: there is no last good set. */
export class RulesInvalidError extends Error {
  override name = 'RulesInvalidError';
  constructor(readonly errors: readonly RuleLoadError[]) {
    super(`rules are invalid:\n${errors.map(formatRuleError).join('\n')}`);
  }
}

/**
 * Loads the rules and keeps them current. Never throws for a bad rule file: invalid rules
 * at start are logged loudly, `valid()` is false and `current()` empty until a reload
 * succeeds; a reload that fails (or throws) is refused and the last good rules keep serving.
 */
export function startRuleWatcher(opts: RuleWatcherOptions): RuleWatcher {
  const { dir, logger } = opts;
  const debounceMs = opts.debounceMs ?? 100;
  const pollMs = opts.pollMs ?? 500;
  const listeners = new Set<(e: ReloadEvent) => void>();

  let fingerprint = fingerprintOf(dir);
  const first = safeLoad(dir, opts);
  let everValid = first.ok;
  let current = first.ok ? first.ruleSet : createRuleSet(dir, []);
  let lastErrors: readonly RuleLoadError[] = first.ok ? [] : Object.freeze(first.errors);
  if (!first.ok) {
    for (const e of first.errors) logger.error({ file: e.file, path: e.path }, `rule file invalid: ${formatRuleError(e)}`);
    logger.error({ dir, errors: first.errors.length },
      'RULES INVALID AT START: intake runs and events are stored, but nothing is delivered until the rule files are fixed (they reload on save)');
  }
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let watchUnavailable = false;
  if (first.ok) logger.info({ dir, files: first.files, rules: first.rules }, 'rules loaded');

  const reload = (): ReloadEvent => {
    fingerprint = fingerprintOf(dir);
    const r = safeLoad(dir, opts);
    let event: ReloadEvent;
    if (r.ok) {
      current = r.ruleSet;
      everValid = true;
      lastErrors = [];
      event = { ok: true, ruleSet: r.ruleSet, files: r.files, rules: r.rules };
      logger.info({ dir, files: r.files, rules: r.rules }, 'rules reloaded');
    } else {
      lastErrors = Object.freeze(r.errors);
      event = { ok: false, errors: lastErrors };
      for (const e of r.errors) logger.error({ file: e.file, path: e.path }, `rule file invalid: ${formatRuleError(e)}`);
      logger.warn({ dir, errors: r.errors.length }, 'rules reload refused; the last good rules keep serving');
    }
    for (const l of listeners) {
      try {
        l(event);
      } catch (err) {
        logger.error({ err }, 'rules onReload listener failed');
      }
    }
    return event;
  };

  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) reload();
    }, debounceMs);
  };

  const startWatch = () => {
    if (watcher !== undefined || closed || watchUnavailable || opts.watch === false) return;
    try {
      watcher = watch(dir, { recursive: true, persistent: false }, schedule);
      watcher.on('error', () => {
        // The directory went away or was replaced; the poll notices and re-arms the watch.
        watcher?.close();
        watcher = undefined;
        schedule();
      });
    } catch (err) {
      watcher = undefined; // no such directory yet, or no recursive watch here: the poll covers it
      if ((err as NodeJS.ErrnoException).code === 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM') watchUnavailable = true;
    }
  };
  startWatch();

  const poll = pollMs > 0
    ? setInterval(() => {
        if (watcher === undefined) startWatch();
        if (timer === undefined && fingerprintOf(dir) !== fingerprint) schedule();
      }, pollMs)
    : undefined;
  poll?.unref();

  return {
    current: () => current,
    errors: () => lastErrors,
    valid: () => everValid,
    reload,
    onReload(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(poll);
      watcher?.close();
      watcher = undefined;
    },
  };
}

/**
 * Names, sizes, mtimes and inodes of everything a load reads: enough to notice any edit,
 * new file, deletion or rename, for a few dozen stat calls.
 */
function fingerprintOf(dir: string): string {
  const parts: string[] = [];
  const visit = (path: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch {
      parts.push(`${path}:-`);
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const child = join(path, name);
      try {
        const s = statSync(child);
        if (s.isDirectory()) {
          if (depth < 2 && (depth > 0 || name === 'accounts')) visit(child, depth + 1);
        } else if (name.endsWith('.json')) {
          parts.push(`${child}:${s.size}:${s.mtimeMs}:${s.ino}`);
        }
      } catch {
        parts.push(`${child}:?`);
      }
    }
  };
  visit(dir, 0);
  return parts.join('\n');
}

/** loadRules, with anything it throws (a bug, a resource error) turned into a refused load. */
function safeLoad(dir: string, opts: LoadRulesOptions): ReturnType<typeof loadRules> {
  try {
    return loadRules(dir, opts);
  } catch (err) {
    return { ok: false, errors: [{ file: dir, path: '', message: `loading the rules failed: ${(err as Error).message}` }], files: 0, rules: 0 };
  }
}
