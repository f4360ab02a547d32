// Hot reload of the rules: the files under RULES_DIR, overlaid by the live versions in the
// store when there is one. Files: watched for changes by rule-file-watch.ts (fs.watch, and a
// stat poll as the safety net). Store: its revision is polled (every second by default, or
// when a publish is announced while announcements are heard: announced-poll.ts) and
// `refresh()` reads it at once. Every
// change reloads the whole set; an invalid set is logged and refused, the last good one stays.
// Until a whole set has loaded once there is no last good one: the good documents serve, and
// each broken one holds delivery for its own scope only (rule-holds.ts).
import type { RuleVersionStore } from '../store/types.ts';
import { formatRuleError, loadRules, type LoadRulesOptions, type OverlayDocument, type RuleLoadError } from './load-rules.ts';
import { pluginsDirFor } from './plugin-rules.ts';
import { watchRuleFiles, type RuleFileWatchOptions } from './rule-file-watch.ts';
import { fingerprintOf } from './rule-files.ts';
import { createRuleSet, type RuleSet } from './rule-set.ts';
import { describeHold } from './rule-holds.ts';
import { overlayOf } from './stored-rules.ts';
import type { Announcer } from '../poll-tick.ts';
import { everyUnlessAnnounced } from '../announced-poll.ts';

/** The pino subset used here. */
export interface WatcherLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type ReloadEvent =
  | { ok: true; ruleSet: RuleSet; files: number; rules: number }
  | { ok: false; errors: readonly RuleLoadError[] };

export interface RuleWatcherOptions extends Omit<LoadRulesOptions, 'overlay'>, RuleFileWatchOptions {
  dir: string;
  logger: WatcherLogger;
  /** Its live versions replace the files of the same scope and destination (src/rules/README.md). */
  store?: Pick<RuleVersionStore, 'live' | 'revision'>;
  /** Interval of the store's revision poll; default 1000 ms. 0 turns it off (refresh() still reads). */
  storePollMs?: number;
  /** What announces rule publishes (the store's watchChanges): while it is heard, the revision is read at each announcement instead of every storePollMs. */
  announcer?: Announcer;
}

export interface RuleWatcher {
  /** The last valid rule set. */
  current(): RuleSet;
  /** Errors of the last reload attempt if it was refused; empty once a reload succeeds. */
  errors(): readonly RuleLoadError[];
  /**
   * Whether a whole valid rule set has ever loaded. False only when the rules were invalid
   * at start (or, with a store, it has not been read yet) and have not been fixed since:
   * `current()` is then the documents that did load, naming the scopes it holds (`held`).
   */
  valid(): boolean;
  /**
   * Whether delivery can run: valid(), or a partial set that holds less than everything.
   * False while the store has not been read, or while a problem of no one document (the
   * folder missing, a misplaced file) holds every scope: delivery then waits, events queue.
   */
  usable(): boolean;
  /** Reloads now: the files, with the store's versions as last read (also what a file change triggers). */
  reload(): ReloadEvent;
  /** Reads the store's live versions now, then reloads (what a revision change triggers; call it after a publish). */
  refresh(): Promise<ReloadEvent>;
  /** Settles when the first load is done: at once without a store, after the first read of it with one. */
  readonly ready: Promise<void>;
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

const STORE = 'rule store';

/**
 * Loads the rules and keeps them current. Never throws for a bad rule: invalid rules at start
 * are logged loudly, `valid()` is false and `current()` empty until a reload succeeds; a reload
 * that fails (or throws) is refused and the last good rules keep serving. A store that cannot
 * be read is logged once and read again on the next poll; until its first read the rules wait.
 */
export function startRuleWatcher(opts: RuleWatcherOptions): RuleWatcher {
  const { dir, logger, store } = opts;
  const listeners = new Set<(e: ReloadEvent) => void>();

  let fingerprint = '';
  let started = false;
  let everValid = false;
  let usable = false;
  let current = createRuleSet(dir, []);
  let lastErrors: readonly RuleLoadError[] = [];
  // The store's versions as last read (null: not read yet) and the revision they are of.
  let overlay: readonly OverlayDocument[] | null = store ? null : [];
  let revision: number | null = null;
  let storeFailing = false;
  let closed = false;

  const reload = (): ReloadEvent => {
    fingerprint = fingerprintOf(dir, pluginsDirFor(dir, opts.pluginsDir));
    if (overlay === null) return { ok: false, errors: lastErrors.length > 0 ? lastErrors : [{ file: STORE, path: '', message: 'not read yet' }] };
    const r = safeLoad(dir, { displayBase: opts.displayBase, overlay });
    const where = store ? { dir, revision } : { dir };
    let event: ReloadEvent;
    if (r.ok) {
      current = r.ruleSet;
      everValid = true;
      usable = true;
      lastErrors = [];
      event = { ok: true, ruleSet: r.ruleSet, files: r.files, rules: r.rules };
      logger.info({ ...where, files: r.files, rules: r.rules }, started ? 'rules reloaded' : 'rules loaded');
    } else {
      lastErrors = Object.freeze(r.errors);
      event = { ok: false, errors: lastErrors };
      for (const e of r.errors) logger.error({ file: e.file, path: e.path }, `rule file invalid: ${formatRuleError(e)}`);
      if (everValid) logger.warn({ ...where, errors: r.errors.length }, 'rules reload refused; the last good rules keep serving');
      else {
        if (r.partial) {
          current = r.partial;
          usable = r.partial.held.every((h) => h.destination !== null);
        }
        const held = current.held.map(describeHold);
        logger.error({ ...where, errors: r.errors.length, held },
          `RULES INVALID${started ? '' : ' AT START'}: intake runs and events are stored; delivery is held for ${held.join('; ') || 'everything'} until the rules are fixed (files reload on save, store versions when published), everything else is delivered`);
      }
    }
    started = true;
    for (const l of listeners) {
      try {
        l(event);
      } catch (err) {
        logger.error({ err }, 'rules onReload listener failed');
      }
    }
    return event;
  };

  const storeReadable = () => {
    if (storeFailing) logger.info({ dir }, 'the rule store answers again');
    storeFailing = false;
  };
  const storeFailed = (err: unknown): RuleLoadError => {
    const e: RuleLoadError = { file: STORE, path: '', message: `cannot be read: ${(err as Error).message}` };
    if (closed) return e; // the store closes after the watcher: a read in flight then fails quietly
    if (!storeFailing) {
      logger.error({ err, dir }, overlay === null
        ? 'the rule store cannot be read: no rules yet, delivery waits; retrying on every poll'
        : 'the rule store cannot be read: the last good rules keep serving; retrying on every poll');
    }
    storeFailing = true;
    if (overlay === null) lastErrors = Object.freeze([e]);
    return e;
  };

  // Store reads run one after another, so an older read never lands after a newer one.
  let reading: Promise<unknown> = Promise.resolve();
  const readStore = async (): Promise<ReloadEvent> => {
    if (!store) return reload();
    let rev: number;
    let overlayNow: readonly OverlayDocument[];
    try {
      rev = await store.revision(); // before live(): a change in between only makes the next poll read again
      overlayNow = overlayOf(await store.live());
    } catch (err) {
      return { ok: false, errors: [storeFailed(err)] };
    }
    storeReadable();
    if (closed) return { ok: false, errors: [{ file: STORE, path: '', message: 'the rule watcher is closed' }] };
    revision = rev;
    overlay = overlayNow;
    return reload();
  };
  const refresh = (): Promise<ReloadEvent> => {
    const run = reading.then(readStore);
    reading = run.catch(() => undefined);
    return run;
  };

  let ready: Promise<void>;
  if (store) ready = refresh().then(() => undefined, () => undefined);
  else {
    reload();
    ready = Promise.resolve();
  }

  // Reloads when the files change (rule-file-watch.ts); `fingerprint` is what the last reload read.
  const files = watchRuleFiles(dir, opts, () => fingerprint, reload);

  const storePollMs = opts.storePollMs ?? 1000;
  let polling = false;
  /** Asked for while a read ran (an announcement): read again after it. */
  let again = false;
  const pollRevision = (): void => {
    if (closed) return;
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    // Through then(): a revision() that throws instead of rejecting is a failed read too.
    Promise.resolve()
      .then(() => store!.revision())
      .then((rev) => {
        storeReadable();
        if (!closed && (rev !== revision || overlay === null)) return refresh();
      }, storeFailed)
      .finally(() => {
        polling = false;
        if (!again) return;
        again = false;
        pollRevision();
      });
  };
  // On the thread's poll tick (poll-tick.ts) at the default second.
  const stopStorePoll = store && storePollMs > 0 ? everyUnlessAnnounced(storePollMs, opts.announcer, pollRevision) : undefined;

  return {
    current: () => current,
    errors: () => lastErrors,
    valid: () => everValid,
    usable: () => usable,
    reload,
    refresh,
    ready,
    onReload(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      files.close();
      stopStorePoll?.();
    },
  };
}

/** loadRules, with anything it throws (a bug, a resource error) turned into a refused load. */
function safeLoad(dir: string, opts: LoadRulesOptions): ReturnType<typeof loadRules> {
  try {
    return loadRules(dir, opts);
  } catch (err) {
    return { ok: false, errors: [{ file: dir, path: '', message: `loading the rules failed: ${(err as Error).message}` }], files: 0, rules: 0 };
  }
}
