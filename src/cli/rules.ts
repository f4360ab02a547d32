// `tracklane rules check`: validates every rule file under RULES_DIR exactly as the
// service does at load and on hot reload, and each literal output against its destination's
// native schema (as publishing does), naming the file and JSON path of each error.
// `tracklane rules preview`: what endpoint 2's preview shows, for an event in a file (the
// files overlaid by the live store versions, as the service serves them). The version
// commands (import, export, history, diff, publish, rollback, revert) are in rule-versions.ts.
import { readFileSync } from 'node:fs';
import { formatRuleError, loadRules, type RuleLoadError } from '../rules/load-rules.ts';
import { loadPlugins } from '../destinations/load-plugins.ts';
import { approvedEvents } from '../accounts/account-service.ts';
import { validateEvent } from '../schema/validate-event.ts';
import { issueString } from '../schema/issue-text.ts';
import { funnelWarnings } from '../pipeline/funnel-check.ts';
import { previewEvent, type DestinationPreview } from '../pipeline/preview-event.ts';
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError } from './output.ts';
import { usageFor } from './usage.ts';
import { RULE_VERSION_COMMANDS, nativeSchemas } from './rule-versions.ts';
import { overlayOf } from '../rules/stored-rules.ts';

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
  const r = loadRules(dir, { nativeSchemaOf: await nativeSchemas(ctx) });
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

async function preview(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['rules', 'preview'];
  const { values, positionals: pos } = parseCommand(args, { account: { type: 'string' }, event: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  if (!values.account) throw new UsageError('--account is required', cmd);
  if (!values.event) {
    throw new UsageError('--event is required: a JSON file holding one event payload exactly as you would POST it to the intake', cmd);
  }
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(values.event, 'utf8'));
  } catch (e) {
    throw new CliError(`cannot read a JSON event from "${values.event}" (one event payload as POSTed to /webhooks/service/event): ${(e as Error).message}`);
  }
  const config = ctx.config();
  const store = await ctx.store();
  const loaded = loadRules(config.rulesDir, { overlay: overlayOf(await store.rules.live()) });
  if (!loaded.ok) {
    throw new CliError(`rules are invalid (${plural(loaded.errors.length, 'error')}, first: ${formatRuleError(loaded.errors[0])}); run: tracklane rules check`);
  }
  const account = await store.accounts.get(values.account);
  if (!account) throw new CliError(`no account with script id "${values.account}"`);
  const result = validateEvent(body, { approvedEvents: approvedEvents(account), defaultTaxRate: account.taxRate, host: account.host, consentDefault: account.consentDefault });
  const warnings = result.warnings.map(issueString);
  let destinations: DestinationPreview[] = [];
  if (result.event) {
    warnings.push(...(await funnelWarnings(store.events, account.scriptId, result.event)).map(issueString));
    const now = Date.now();
    destinations = await previewEvent(
      { plugins: await loadPlugins(config.pluginsDirs), rules: () => loaded.ruleSet, pool: null },
      { account, destinations: await store.destinations.list(account.scriptId), event: result.event, eventId: result.event.event.id ?? 'preview', receivedAt: now, now },
    );
    for (const d of destinations) warnings.push(...d.warnings);
  }
  const report = { errors: result.errors.map(issueString), warnings, preview: destinations };
  ctx.output(values.json ?? false).result(report, () => {
    const lines: string[] = [];
    for (const e of report.errors) lines.push(`error    ${e}`);
    for (const w of report.warnings) lines.push(`warning  ${w}`);
    if (report.errors.length === 0 && destinations.length === 0) lines.push('No destinations are connected to this account.');
    for (const d of destinations) {
      lines.push('', `${d.type} ${d.destination_id} (${d.name}): ${d.status === 'would_send' ? 'would send' : `skipped — ${d.message}`}`);
      for (const r of d.requests) {
        lines.push(`  ${r.method} ${r.url}`);
        for (const [k, v] of Object.entries(r.headers)) lines.push(`  ${k}: ${v}`);
        lines.push(JSON.stringify(r.body, null, 2).replace(/^/gm, '  '));
      }
    }
    return lines.join('\n');
  });
  if (report.errors.length > 0) throw new CliError(`the event has ${plural(report.errors.length, 'error')}`);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs `rules <command> …`. */
export async function runRules(args: string[], ctx: CliContext): Promise<void> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h') return void process.stdout.write(usageFor('rules'));
  if (name === undefined) throw new UsageError('rules needs a command', ['rules']);
  if (name === 'preview') return preview(rest, ctx);
  if (Object.hasOwn(RULE_VERSION_COMMANDS, name)) return RULE_VERSION_COMMANDS[name](rest, ctx);
  if (name !== 'check') throw new UsageError(`unknown command "rules ${name}"`, ['rules']);
  await check(rest, ctx);
}
