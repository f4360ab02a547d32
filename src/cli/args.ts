// Flag parsing on top of node:util parseArgs: strict (unknown flags are usage
// errors) and the typed conversions the commands share.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, UsageError } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every command takes. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/**
 * parseArgs in strict mode with COMMON_OPTIONS added; its errors become UsageErrors
 * that print the usage of `command` (e.g. ['accounts', 'create']).
 */
export function parseCommand<O extends Options>(args: string[], options: O, command: readonly string[]) {
  try {
    return parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    if (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(e.message.split('\n')[0].replace(/\. To specify a positional argument.*$/, '.'), command);
    }
    throw err;
  }
}

/** Exactly `names.length` positionals, or a UsageError naming the missing one. */
export function positionals(values: string[], names: readonly string[], command: readonly string[]): string[] {
  if (values.length < names.length) throw new UsageError(`missing ${names[values.length]}`, command);
  if (values.length > names.length) throw new UsageError(`unexpected argument "${values[names.length]}"`, command);
  return values;
}

/** A decimal number flag (`--tax-rate 19`, `--grace-hours 0.5`); '' means "no value" (null). A bad value exits 1. */
export function numberFlag(flag: string, raw: string): number | null {
  if (raw.trim() === '') return null;
  const n = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(n)) throw new CliError(`--${flag} must be a number, got "${raw}"`);
  return n;
}

/** A whole number flag within [min, max]. A bad value exits 1. */
export function intFlag(flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new CliError(`--${flag} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new CliError(`--${flag} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** Rejects two flags that contradict each other, such as --enable with --disable. */
export function exclusive(values: Record<string, unknown>, a: string, b: string, command: readonly string[]): void {
  if (values[a] !== undefined && values[b] !== undefined) throw new UsageError(`--${a} and --${b} cannot be used together`, command);
}
