// What the CLI prints. With --json, stdout carries exactly one JSON document and
// nothing else; otherwise aligned text for people. Failures go to stderr as one line.
import { isAbsolute, relative } from 'node:path';

/** A failure the operator can act on: one line on stderr, exit code 1 (or as given). */
export class CliError extends Error {
  override name = 'CliError';
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/** The command line itself is wrong: exit code 2, followed by the relevant usage. */
export class UsageError extends CliError {
  override name = 'UsageError';
  /** The group and command whose usage to print, e.g. ['accounts', 'create']. */
  constructor(message: string, readonly usageOf: readonly string[] = []) {
    super(message, 2);
  }
}

export interface Output {
  readonly json: boolean;
  /** Prints `data` as JSON with --json, else the text `human()` returns. */
  result(data: unknown, human: () => string): void;
}

export function createOutput(json: boolean, write: (s: string) => void = (s) => process.stdout.write(s)): Output {
  return {
    json,
    result(data, human) {
      const text = json ? JSON.stringify(data, null, 2) : human();
      write(text.endsWith('\n') ? text : text + '\n');
    },
  };
}

/** `key  value` lines with the values aligned. Null and empty values print as `-`. */
export function formatKeyValue(rows: readonly (readonly [string, unknown])[], indent = ''): string {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${indent}${k.padEnd(width)}  ${cell(v)}`).join('\n');
}

/** A table with a header row; columns are as wide as their widest cell. */
export function formatTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [headers.map(String), ...rows.map((r) => r.map(cell))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}

function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.join(', ');
  return String(v);
}

/** Epoch milliseconds as ISO 8601 (UTC), or null. */
export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** `path` as the operator can type it from here: relative to the working folder when below it, else absolute. */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** The one line written to stderr for a failure; newlines folded so it stays one line. */
export function errorLine(message: string): string {
  return `tracklane: ${message.replace(/\s*\n\s*/g, ' ').trim()}\n`;
}
