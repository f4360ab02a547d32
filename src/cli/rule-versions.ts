// `tracklane rules import|export|history|diff|publish|rollback|revert`: mapping rules as versions in
// the store (src/rules/README.md, "Versions in the store"). Every change goes through
// src/rules/rule-versions.ts, which checks it as loading will before anything is stored;
// running instances serve it within 2 s.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { formatRuleError } from '../rules/load-rules.ts';
import { loadPlugins, nativeSchemasOf, PluginLoadError } from '../destinations/load-plugins.ts';
import type { NativeSchemaOf } from '../destinations/native-schema.ts';
import { diffRules, importRules, publishRules, revertRules, rollbackRules, type RuleProblem, type RuleWriteResult } from '../rules/rule-versions.ts';
import { DEFAULT_SCOPE, versionLabel } from '../rules/stored-rules.ts';
import type { RuleChange, RuleVersion } from '../store/types.ts';
import { intFlag, parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, formatTable, iso } from './output.ts';
import { usageFor } from './usage.ts';

type Command = (args: string[], ctx: CliContext) => Promise<void>;

const NOTE_OPTIONS = { message: { type: 'string' }, author: { type: 'string' } } as const;

/**
 * The native schemas of the plugins in PLUGINS_DIR (`only`: of those destinations): a rule
 * whose literal output one refuses is refused. Plugins that do not load leave the literals
 * unchecked, said on stderr (the service would not start with them; the rules are still
 * checked as loading checks them).
 */
export async function nativeSchemas(ctx: CliContext, only?: readonly string[]): Promise<NativeSchemaOf | undefined> {
  try {
    return nativeSchemasOf(await loadPlugins(ctx.config().pluginsDirs, only));
  } catch (err) {
    if (!(err instanceof PluginLoadError)) throw err;
    process.stderr.write(`tracklane: literal outputs not checked against the native schemas: ${err.message}\n`);
    return undefined;
  }
}

/** `--author`, else $USER, else `cli`. */
const authorOf = (flag: string | undefined): string => flag || process.env.USER || 'cli';

const versionJson = (v: RuleVersion) => ({
  version: v.version, scope: v.scope, destination: v.destination, author: v.author, message: v.message, created_at: iso(v.createdAt), live: v.live,
});
const changeJson = (c: RuleChange) => ({
  id: c.id, version: c.version, scope: c.scope, destination: c.destination, action: c.action, author: c.author, message: c.message, at: iso(c.at), live: c.live,
});

/** Where `rules export` writes a version: the path a rule file of its scope and destination has. */
const filePath = (v: Pick<RuleVersion, 'scope' | 'destination'>): string =>
  v.scope === DEFAULT_SCOPE ? `${v.destination}.json` : join('accounts', v.scope, `${v.destination}.json`);

/** A refused change: `file: path: message` lines on stderr (the JSON report on stdout with --json), exit 1. */
function refuse(json: boolean, ctx: CliContext, errors: readonly { file: string; path: string; message: string }[], what: string): never {
  if (json) ctx.output(true).result({ ok: false, errors }, () => '');
  else process.stderr.write(errors.map((e) => formatRuleError(e) + '\n').join(''));
  throw new CliError(`${what}: ${errors.length} error${errors.length === 1 ? '' : 's'}`);
}

/** The outcome of a publish or rollback; problems in the document itself are named `label`. */
function reportWrite(r: RuleWriteResult, label: string, json: boolean, ctx: CliContext, verb: string): void {
  if (!r.ok) refuse(json, ctx, r.errors.map((e: RuleProblem) => ({ ...e, file: e.file ?? label })), `${verb} refused`);
  ctx.output(json).result({ ok: true, version: versionJson(r.version) }, () =>
    `${verb === 'publish' ? 'Published' : 'Rolled back to'} ${versionLabel(r.version)}; running instances serve it within 2 s.`);
}

const importCmd: Command = async (args, ctx) => {
  const cmd = ['rules', 'import'];
  const { values, positionals: pos } = parseCommand(args, NOTE_OPTIONS, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const json = values.json ?? false;
  const dir = ctx.config().rulesDir;
  const store = await ctx.store();
  const r = await importRules({ store: store.rules, dir }, { author: authorOf(values.author), message: values.message ?? `import from ${dir}` }, Date.now());
  if (!r.ok) refuse(json, ctx, r.errors, `rules import refused (nothing imported) in ${dir}`);
  const report = { ok: true, dir, imported: r.imported.map(versionJson), unchanged: r.unchanged };
  ctx.output(json).result(report, () => [
    ...r.imported.map((v) => `imported   ${filePath(v)} as version ${v.version}`),
    ...r.unchanged.map((u) => `unchanged  ${u.file} (version ${u.version})`),
    `${r.imported.length} imported, ${r.unchanged.length} unchanged${r.imported.length > 0 ? '; running instances serve them within 2 s' : ''}.`,
  ].join('\n'));
};

const exportCmd: Command = async (args, ctx) => {
  const cmd = ['rules', 'export'];
  const { values, positionals: pos } = parseCommand(args, { dir: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const dir = values.dir ?? ctx.config().rulesDir;
  const live = await (await ctx.store()).rules.live();
  const written = live.map((v) => {
    const file = join(dir, filePath(v));
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, JSON.stringify(v.document, null, 2) + '\n');
    } catch (err) {
      throw new CliError(`cannot write ${file}: ${(err as Error).message}`);
    }
    return { version: v.version, scope: v.scope, destination: v.destination, file };
  });
  ctx.output(values.json ?? false).result({ dir, written }, () =>
    written.length === 0
      ? 'No rule versions in the store; nothing written.'
      : written.map((w) => `wrote ${relative(process.cwd(), w.file) || w.file} (version ${w.version})`).join('\n'));
};

const history: Command = async (args, ctx) => {
  const cmd = ['rules', 'history'];
  const { values, positionals: pos } = parseCommand(args, { destination: { type: 'string' }, scope: { type: 'string' }, limit: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const limit = values.limit === undefined ? 100 : intFlag('limit', values.limit, 1, 10_000);
  const rows = (await (await ctx.store()).rules.history({ scope: values.scope, destination: values.destination, limit })).map(changeJson);
  ctx.output(values.json ?? false).result(rows, () =>
    rows.length === 0
      ? 'No rule changes.'
      : formatTable(['VERSION', 'ACTION', 'SCOPE', 'DESTINATION', 'AT', 'AUTHOR', 'LIVE', 'MESSAGE'],
          rows.map((c) => [c.version, c.action, c.scope, c.destination, c.at, c.author, c.live, c.message])));
};

const diff: Command = async (args, ctx) => {
  const cmd = ['rules', 'diff'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [a, b] = positionals(pos, ['A', 'B'], cmd).map((raw, i) => intFlag(i === 0 ? 'A' : 'B', raw, 1, Number.MAX_SAFE_INTEGER));
  const store = await ctx.store();
  const [before, after] = await Promise.all([store.rules.get(a), store.rules.get(b)]);
  for (const [n, v] of [[a, before], [b, after]] as const) if (v === null) throw new CliError(`no rule version ${n}`);
  const changes = diffRules(before!.document, after!.document);
  const compact = (x: unknown) => JSON.stringify(x);
  ctx.output(values.json ?? false).result({ from: versionJson(before!), to: versionJson(after!), changes }, () => [
    `${versionLabel(before!)} -> ${versionLabel(after!)}: ${changes.length === 0 ? 'no rule changes' : `${changes.length} rule change${changes.length === 1 ? '' : 's'}`}`,
    ...changes.flatMap((c) => [
      `${c.change.padEnd(8)} ${c.id}`,
      ...(c.before !== undefined && c.change !== 'moved' ? [`  - ${compact(c.before)}`] : []),
      ...(c.after !== undefined && c.change !== 'moved' ? [`  + ${compact(c.after)}`] : []),
    ]),
  ].join('\n'));
};

const publish: Command = async (args, ctx) => {
  const cmd = ['rules', 'publish'];
  const { values, positionals: pos } = parseCommand(args, { scope: { type: 'string' }, ...NOTE_OPTIONS }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [file] = positionals(pos, ['FILE'], cmd);
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new CliError(`cannot read a JSON rule file from "${file}": ${(err as Error).message}`);
  }
  const named = (document as { destination?: unknown } | null)?.destination;
  // Without a destination in the file, its name stands in (and the check says what is missing).
  const destination = typeof named === 'string' ? named : basename(file, '.json');
  const store = await ctx.store();
  const r = await publishRules({ store: store.rules, dir: ctx.config().rulesDir, nativeSchemaOf: await nativeSchemas(ctx, [destination]) },
    { scope: values.scope ?? DEFAULT_SCOPE, destination, document, author: authorOf(values.author), message: values.message ?? '' }, Date.now());
  reportWrite(r, file, values.json ?? false, ctx, 'publish');
};

const rollback: Command = async (args, ctx) => {
  const cmd = ['rules', 'rollback'];
  const { values, positionals: pos } = parseCommand(args, NOTE_OPTIONS, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [raw] = positionals(pos, ['VERSION'], cmd);
  const version = intFlag('VERSION', raw, 1, Number.MAX_SAFE_INTEGER);
  const store = await ctx.store();
  const target = await store.rules.get(version);
  if (target === null) throw new CliError(`no rule version ${version}`);
  const r = await rollbackRules({ store: store.rules, dir: ctx.config().rulesDir, nativeSchemaOf: await nativeSchemas(ctx, [target.destination]) }, version, authorOf(values.author), values.message ?? '', Date.now());
  reportWrite(r, versionLabel(target), values.json ?? false, ctx, 'rollback');
};

const revert: Command = async (args, ctx) => {
  const cmd = ['rules', 'revert'];
  const { values, positionals: pos } = parseCommand(args, { ...NOTE_OPTIONS, scope: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [destination] = positionals(pos, ['DESTINATION'], cmd);
  const scope = values.scope ?? DEFAULT_SCOPE;
  const json = values.json ?? false;
  const store = await ctx.store();
  const r = await revertRules({ store: store.rules, dir: ctx.config().rulesDir }, { scope, destination }, authorOf(values.author),
    values.message || 'revert to the file or plugin default', Date.now());
  if (!r.ok) refuse(json, ctx, r.errors.map((e: RuleProblem) => ({ ...e, file: e.file ?? `${scope}/${destination}` })), 'revert refused');
  ctx.output(json).result({ ok: true, change: changeJson(r.change) }, () =>
    `Reverted ${scope}/${destination} (was version ${r.change.version}): its rule file or plugin default serves; running instances within 2 s.`);
};

/** The version commands of `rules`, by name. */
export const RULE_VERSION_COMMANDS: Readonly<Record<string, Command>> = {
  import: importCmd, export: exportCmd, history, diff, publish, rollback, revert,
};
