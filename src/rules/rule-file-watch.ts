// Noticing that the rule files changed, for rule-watcher.ts to reload: a recursive fs.watch of
// RULES_DIR and a watch of each plugin folder with a rules.json, for speed, plus a stat poll
// as the safety net (missed events, such as through some container mounts, a directory created
// later): every 500 ms without the watch, every 5 s with it (a poll stats every rule file and
// plugin folder, ~0.5 ms of CPU on each thread that watches: an idle server does not do it
// twice a second).
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { PluginFolders } from '../destinations/load-plugins.ts';
import { PLUGIN_RULES_FILE, pluginRuleFiles, pluginsDirFor } from './plugin-rules.ts';
import { fingerprintOf } from './rule-files.ts';
import { after } from '../poll-tick.ts';

export interface RuleFileWatchOptions {
  /** Plugin folders whose rules.json files are watched beside RULES_DIR; default: the ones registered for it (plugin-rules.ts). */
  pluginsDir?: PluginFolders;
  /** Quiet time after the last change before reloading; default 100 ms. */
  debounceMs?: number;
  /** Interval of the stat poll while fs.watch is not watching; default 500 ms. 0 turns the poll off. */
  pollMs?: number;
  /** Interval of the stat poll while fs.watch watches (the safety net only); default 5 s, never below pollMs. */
  watchedPollMs?: number;
  /** Use fs.watch; default true. False leaves the poll alone to notice changes. */
  watch?: boolean;
}

/**
 * Calls `changed` once the rule files under `dir` (and the plugins' rules.json) have been quiet
 * for debounceMs after a change fs.watch reports, or when the poll finds their fingerprint
 * (rule-files.ts) other than `loaded()`, the one the last load read.
 */
export function watchRuleFiles(dir: string, opts: RuleFileWatchOptions, loaded: () => string, changed: () => void): { close(): void } {
  const debounceMs = opts.debounceMs ?? 100;
  const pollMs = opts.pollMs ?? 500;
  const watchedPollMs = Math.max(pollMs, opts.watchedPollMs ?? 5_000);
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let watchUnavailable = false;
  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) changed();
    }, debounceMs);
  };

  /** The plugins' folders holding a rules.json, watched beside RULES_DIR (each alone: a plugin folder may hold much else). */
  let pluginWatchers: FSWatcher[] = [];
  const stopWatch = () => {
    watcher?.close();
    watcher = undefined;
    for (const w of pluginWatchers) w.close();
    pluginWatchers = [];
  };
  const startWatch = () => {
    if (watcher !== undefined || closed || watchUnavailable || opts.watch === false) return;
    try {
      watcher = watch(dir, { recursive: true, persistent: false }, schedule);
      watcher.on('error', () => {
        // The directory went away or was replaced; the poll notices and re-arms the watch.
        stopWatch();
        schedule();
      });
    } catch (err) {
      watcher = undefined; // no such directory yet, or no recursive watch here: the poll covers it
      if ((err as NodeJS.ErrnoException).code === 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM') watchUnavailable = true;
      return;
    }
    for (const f of pluginRuleFiles(pluginsDirFor(dir, opts.pluginsDir))) {
      try {
        const w = watch(dirname(f.abs), { persistent: false }, (_event, name) => {
          if (name === null || name === PLUGIN_RULES_FILE) schedule();
        });
        w.on('error', () => w.close()); // the folder went away: the poll notices the file did
        pluginWatchers.push(w);
      } catch {
        // not watchable: the poll covers it
      }
    }
  };
  startWatch();

  let cancelPoll = (): void => undefined;
  const nextPoll = () => {
    if (closed || pollMs <= 0) return;
    // On the thread's poll tick (poll-tick.ts) when a whole number of seconds.
    cancelPoll = after(watcher === undefined ? pollMs : watchedPollMs, () => {
      if (watcher === undefined) startWatch();
      if (timer === undefined && fingerprintOf(dir, pluginsDirFor(dir, opts.pluginsDir)) !== loaded()) schedule();
      nextPoll();
    });
  };
  nextPoll();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      cancelPoll();
      stopWatch();
    },
  };
}
