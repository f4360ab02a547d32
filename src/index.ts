// The process entry, the only module with side effects: config → server → signals.
import { loadConfig, ConfigError } from './config.ts';
import { createLogger, serverLogDestination } from './logger.ts';
import { startServer } from './server.ts';
import { EnvFileError, loadEnvFile } from './env-file.ts';
import { describeDatabase } from './store/open-store.ts';

async function main(): Promise<void> {
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
  const running = await startServer(config, { logger });
  logger.info({
    url: running.url, store: running.store.kind, dataDir: config.dataDir,
    database: describeDatabase(config), envFile: envFile.file,
  }, 'tracklane listening');
  logger.flush(); // now, not at the next periodic flush: supervisors and scripts wait for this line

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const hard = setTimeout(() => {
      logger.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    hard.unref();
    running.close(8_000).then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`tracklane: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
