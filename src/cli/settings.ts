// Where the CLI's settings come from, found the way the service finds them: `npm start` and
// the systemd unit run in the project folder, so the CLI reads the project folder's `.env`
// (or the file ENV_FILE names) and resolves relative paths (DATA_DIR=./data) against that
// folder too, whatever folder the command is typed in. Otherwise `cd rules && npx tracklane
// accounts list` would read no settings and look for the store under rules/data.
// What was found is kept, so that a command that finds no store can say how it looked.
import { isAbsolute, join, resolve } from 'node:path';
import { loadEnvFile } from '../env-file.ts';

export interface SettingsSource {
  /** The project folder: where `.env` is looked for and relative paths start. */
  root: string;
  /** The settings file read, or null. */
  file: string | null;
  /** Whether ENV_FILE named that file (else it is the project's `.env`). */
  named: boolean;
  /** Where DATA_DIR came from. */
  dataDir: { from: 'environment' | 'file' | 'default'; value: string };
  /** Where DATABASE_URL came from; absent when it is not set. */
  databaseUrlFrom?: 'environment' | 'file';
}

/**
 * Reads the settings file into `env` (the environment wins over it, as for the server) and
 * says where DATA_DIR came from. ENV_FILE, typed in a shell, is relative to that shell's
 * folder (`cwd`); a missing ENV_FILE is an EnvFileError.
 */
export function loadCliSettings(env: NodeJS.ProcessEnv, where: { root: string; cwd: string }): SettingsSource {
  const named = env.ENV_FILE !== undefined && env.ENV_FILE !== '';
  if (named && !isAbsolute(env.ENV_FILE!)) env.ENV_FILE = resolve(where.cwd, env.ENV_FILE!);
  const { file, applied } = loadEnvFile({ cwd: where.root, env });
  const set = env.DATA_DIR !== undefined && env.DATA_DIR !== '';
  const from = !set ? 'default' : applied.includes('DATA_DIR') ? 'file' : 'environment';
  const pg = env.DATABASE_URL !== undefined && env.DATABASE_URL !== '';
  return {
    root: where.root, file, named, dataDir: { from, value: set ? env.DATA_DIR! : './data' },
    ...(pg ? { databaseUrlFrom: applied.includes('DATABASE_URL') ? 'file' as const : 'environment' as const } : {}),
  };
}

/**
 * One clause for an operator: where DATA_DIR (or, for PostgreSQL, DATABASE_URL) came from and
 * which settings file was read.
 */
export function describeSettings(s: SettingsSource): string {
  const relative = isAbsolute(s.dataDir.value) ? '' : `, relative to the project folder ${s.root}`;
  const origin = (from: 'environment' | 'file') => (from === 'file' ? s.file : 'the environment');
  const dataDir = s.databaseUrlFrom !== undefined
    ? `DATABASE_URL from ${origin(s.databaseUrlFrom)}`
    : s.dataDir.from === 'default'
      ? `DATA_DIR is not set, so it is ./data in the project folder ${s.root}`
      : `DATA_DIR=${s.dataDir.value} from ${origin(s.dataDir.from)}${relative}`;
  const file = s.file !== null
    ? `settings read from ${s.file}${s.named ? ' (ENV_FILE)' : ''}`
    : `no settings file read (no ${join(s.root, '.env')}, ENV_FILE not set)`;
  return `${dataDir}; ${file}`;
}
