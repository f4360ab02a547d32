// `tracklane rules check`: validates every rule file under RULES_DIR exactly as the
// service does at load and on hot reload, naming the file and JSON path of each error.
import { formatRuleError, loadRules, type RuleLoadError } from '../rules/load-rules.ts';
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError } from './output.ts';
import { usageFor } from './usage.ts';

/** The --json shape of `rules check`. */
export interface RulesCheckJson {
  ok: boolean;
  dir: string;
  files: number;
  rules: number;
  errors: RuleLoadError[];
}

async function check(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['rules', 'check'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const dir = ctx.config().rulesDir;
  const r = loadRules(dir);
  const report: RulesCheckJson = { ok: r.ok, dir, files: r.files, rules: r.rules, errors: r.ok ? [] : r.errors };
  const out = ctx.output(values.json ?? false);
  if (r.ok) {
    const accounts = r.ruleSet.accounts().length;
    out.result(report, () =>
      `OK: ${plural(r.files, 'file')}, ${plural(r.rules, 'rule')}` +
      `${accounts > 0 ? ` (overrides for ${plural(accounts, 'account')})` : ''} in ${dir}`);
    return;
  }
  if (out.json) out.result(report, () => '');
  else process.stderr.write(r.errors.map((e) => formatRuleError(e) + '\n').join(''));
  throw new CliError(`rules check failed: ${plural(r.errors.length, 'error')} in ${dir}`);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs `rules <command> …`. */
export async function runRules(args: string[], ctx: CliContext): Promise<void> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h') return void process.stdout.write(usageFor('rules'));
  if (name === undefined) throw new UsageError('rules needs a command', ['rules']);
  if (name === 'preview') throw new CliError('"rules preview" is not available in this version');
  if (name !== 'check') throw new UsageError(`unknown command "rules ${name}"`, ['rules']);
  await check(rest, ctx);
}
