// The process entry, the only module with side effects: config → server → signals.
import { loadConfig, ConfigError } from './config.ts';
import { createLogger, serverLogDestination } from './logger.ts';
import { startServer } from './server.ts';
import { EnvFileError, loadEnvFile } from './env-file.ts';
import { describeDatabase } from './store/open-store.ts';
import { startedByScriptRunner, watchParent } from './parent-watch.ts';
import { runsCompiled } from './build-state.cjs';

async function main(): Promise<void> {
  const launcher = process.ppid; // read before start-up, so a launcher gone meanwhile is noticed too
  let config;
  let envFile;
  try {
    envFile = loadEnvFile();
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError || e instanceof EnvFileError) {
      process.stderr.write(`tracklane: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel, serverLogDestination());
  let running;
  try {
    running = await startServer(config, { logger });
  } catch (err) {
    // startServer has stopped what it started, so this is the last line (pino writes what
    // is pending on exit, in order); the stderr line is for whoever reads only that.
    logger.fatal({ err }, 'tracklane failed to start');
    process.stderr.write(`tracklane: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  logger.info({
    url: running.url, store: running.store.kind, dataDir: config.dataDir,
    database: describeDatabase(config), envFile: envFile.file,
    // Which code runs: the build in dist/ or the TypeScript sources through tsx (src/build-state.cjs).
    code: runsCompiled(import.meta.url) ? 'dist' : 'src',
  }, 'tracklane listening');
  logger.flush(); // now, not at the next periodic flush: supervisors and scripts wait for this line

  let stopping = false;
  const stop = (why: { signal: string } | { reason: string }, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info(why, 'shutting down');
    const hard = setTimeout(() => {
      logger.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    hard.unref();
    running.close(8_000).then(
      () => process.exit(exitCode),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Delivery starts after the server listens; a service that cannot deliver stops (exit 1)
  // rather than accept events it would never send.
  running.deliveryReady.then(
    () => logger.info('delivery started'),
    (err: unknown) => {
      logger.fatal({ err }, 'delivery failed to start');
      stop({ reason: 'delivery failed to start' }, 1);
    },
  );
  process.on('SIGTERM', () => stop({ signal: 'SIGTERM' }));
  process.on('SIGINT', () => stop({ signal: 'SIGINT' }));
  // Under npm start or npx a supervisor's signal may reach only the launcher: without it the
  // server would be orphaned, still serving (src/parent-watch.ts).
  if (startedByScriptRunner(process.env)) watchParent(launcher, () => stop({ reason: 'parent process exited' }));
}

main().catch((err) => {
  process.stderr.write(`tracklane: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
