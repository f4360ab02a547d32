// What tells a slowed poll tick (poll-tick.ts slowWhenIdle) that work was announced: a file
// whose change announces a commit (SQLite's WAL, watched by inotify, no wake of its own) and/or
// an announcer (PostgreSQL's LISTEN). Either one failing to be heard keeps the tick at a second.
import { watch, type FSWatcher } from 'node:fs';

/**
 * Watches what announces work while the tick is slow: `onAnnounce` at each announcement, and
 * when announcements may have been missed (the watch failed or was lost), never from within the
 * call itself. Returns the stop, or null when nothing can be heard now (the tick then stays at
 * a second).
 */
export type Announcer = (onAnnounce: () => void) => (() => void) | null;

export interface SlowingLogger {
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

/** A file watch that could not be set is logged once per thread. */
let watchFailed = false;

/**
 * Watches `announcedBy` (a file) and `announcer`, calling `onAnnounce` for each announcement.
 * Returns the stop of both, or null when either cannot be heard (nothing is left watching).
 */
export function watchAnnounced(
  opts: { announcedBy?: string; announcer?: Announcer; logger?: SlowingLogger },
  onAnnounce: () => void,
): (() => void) | null {
  const stops: (() => void)[] = [];
  const stopAll = () => stops.forEach((s) => s());
  if (opts.announcedBy !== undefined) {
    const w = watchFile(opts.announcedBy, onAnnounce, opts.logger);
    if (w === null) return null;
    stops.push(w);
  }
  if (opts.announcer !== undefined) {
    const w = opts.announcer(onAnnounce);
    if (w === null) {
      stopAll();
      return null;
    }
    stops.push(w);
  }
  return stopAll;
}

/** Watches `file` for changes (each an announcement); null when it cannot be watched (logged once). */
function watchFile(file: string, onAnnounce: () => void, logger: SlowingLogger | undefined): (() => void) | null {
  try {
    const watcher: FSWatcher = watch(file, { persistent: false }, () => onAnnounce());
    watcher.on('error', () => onAnnounce());
    return () => watcher.close();
  } catch (err) {
    if (!watchFailed) logger?.warn({ err, file }, 'cannot watch the file that announces work; the polls keep their one-second tick');
    watchFailed = true;
    return null;
  }
}
