// `tracklane destinations …` and `tracklane plugins list`: connect, list, update and
// remove an account's destinations. Config is validated by the plugin's schema; secrets
// are printed masked, in both text and --json output.
import { mergeSettings, type MergeResult } from '../destinations/merge-settings.ts';
import { readFileSync } from 'node:fs';
import { loadPlugins, type PluginRegistry } from '../destinations/load-plugins.ts';
import { PluginScaffoldError, scaffoldPlugin } from '../destinations/plugin-scaffold.ts';
import { createDestinationService, DestinationInputError, type DestinationService, type MaskedDestination } from '../destinations/destination-service.ts';
import { checkDestinationUrl } from '../delivery/ssrf-guard.ts';
import { exclusive, parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatKeyValue, formatTable, shownPath } from './output.ts';
import { usageFor } from './usage.ts';

async function plugins(ctx: CliContext): Promise<PluginRegistry> {
  return loadPlugins(ctx.config().pluginsDirs);
}

async function service(ctx: CliContext): Promise<DestinationService> {
  const allowPrivate = ctx.config().allowPrivateDestinations;
  return createDestinationService(await ctx.store(), await plugins(ctx), {
    checkUrl: (url) => {
      const reason = checkDestinationUrl(url, { allowPrivate });
      // Refused only for its address: say which setting allows it.
      if (reason !== null && checkDestinationUrl(url, { allowPrivate: true }) === null) {
        return `${reason}; private, loopback and link-local addresses are refused unless ALLOW_PRIVATE_DESTINATIONS=1 ` +
          '(set it in .env so the CLI and the server both see it)';
      }
      return reason;
    },
  });
}

/** `--config '{"a":1}'` or `--config @file.json`. */
function readConfig(raw: string): unknown {
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch {
      throw new CliError(`cannot read config file "${raw.slice(1)}"`);
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError('--config must be a JSON object or @file holding one');
  }
}

/** A config naming a setting its type never takes (test_event_code where there is no test mode) exits 2. */
async function usageExit<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof DestinationInputError && err.usage) throw new CliError(err.message, 2);
    throw err;
  }
}

const rows = (d: MaskedDestination): [string, unknown][] => [
  ['id', d.id],
  ['type', d.type],
  ['name', d.name],
  ['enabled', d.enabled],
  ['config', JSON.stringify(d.config)],
  ['created_at', d.created_at],
  ['updated_at', d.updated_at],
];

function help(cmd: string[]): void {
  process.stdout.write(usageFor(...cmd));
}

export async function runDestinations(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add': {
      const cmd = ['destinations', 'add'];
      const { values, positionals: pos } = parseCommand(rest, { type: { type: 'string' }, config: { type: 'string' }, name: { type: 'string' } }, cmd);
      if (values.help) return help(cmd);
      const [id] = positionals(pos, ['ID'], cmd);
      if (!values.type) throw new UsageError('--type is required', cmd);
      if (values.config === undefined) throw new UsageError('--config is required', cmd);
      const svc = await service(ctx);
      const d = svc.view(await usageExit(svc.add(id, values.type, readConfig(values.config), values.name)));
      ctx.output(values.json ?? false).result(d, () => `Connected ${d.type} destination ${d.id} to ${id}.\n\n${formatKeyValue(rows(d), '  ')}`);
      return;
    }
    case 'list': {
      const cmd = ['destinations', 'list'];
      const { values, positionals: pos } = parseCommand(rest, {}, cmd);
      if (values.help) return help(cmd);
      const [id] = positionals(pos, ['ID'], cmd);
      const svc = await service(ctx);
      const store = await ctx.store();
      // With each destination its pause state: a paused one (e.g. `reauthorize`) sends nothing until resumed or updated.
      const list = await Promise.all((await svc.list(id)).map(async (d) => {
        const health = await store.deliveries.health(d.id);
        return { ...svc.view(d), paused: health?.pausedAt != null, pause_reason: health?.pausedAt != null ? health.pauseReason : null };
      }));
      const state = (d: (typeof list)[number]) => (d.paused ? `PAUSED (${d.pause_reason ?? 'no reason'})` : d.enabled ? 'enabled' : 'disabled');
      ctx.output(values.json ?? false).result(list, () =>
        list.length === 0
          ? `No destinations. Connect one with: tracklane destinations add ${id} --type TYPE --config JSON`
          : formatTable(['ID', 'TYPE', 'NAME', 'STATE', 'CONFIG'], list.map((d) => [d.id, d.type, d.name, state(d), JSON.stringify(d.config)])));
      return;
    }
    case 'update': {
      const cmd = ['destinations', 'update'];
      const { values, positionals: pos } = parseCommand(rest, {
        config: { type: 'string' }, name: { type: 'string' }, enable: { type: 'boolean' }, disable: { type: 'boolean' },
        'replace-config': { type: 'boolean' },
      }, cmd);
      if (values.help) return help(cmd);
      const [id, destId] = positionals(pos, ['ID', 'DEST_ID'], cmd);
      exclusive(values, 'enable', 'disable', cmd);
      if (values.config === undefined && values.name === undefined && !values.enable && !values.disable) {
        throw new UsageError('nothing to change: give --config, --name, --enable or --disable', cmd);
      }
      const svc = await service(ctx);
      // --config is a merge patch (null removes a key); --replace-config replaces it whole.
      let merged: MergeResult | undefined;
      if (values.config !== undefined) {
        const given = readConfig(values.config);
        merged = values['replace-config']
          ? { settings: given as Record<string, unknown>, changed: Object.keys(given as object), removed: [] }
          : mergeSettings((await svc.get(id, destId)).settings, given);
      }
      const d = svc.view(await usageExit(svc.update(id, destId, {
        settings: merged?.settings,
        name: values.name,
        enabled: values.enable ? true : values.disable ? false : undefined,
      })));
      const summary = merged === undefined ? '' : values['replace-config']
        ? '\nConfig replaced.'
        : `\nConfig merged: ${merged.changed.length > 0 ? `set ${merged.changed.join(', ')}` : 'nothing changed'}` +
          `${merged.removed.length > 0 ? `; removed ${merged.removed.join(', ')}` : ''}; other keys kept.`;
      ctx.output(values.json ?? false).result(d, () => `Updated destination ${d.id}.${summary}\n\n${formatKeyValue(rows(d), '  ')}`);
      return;
    }
    case 'remove': {
      const cmd = ['destinations', 'remove'];
      const { values, positionals: pos } = parseCommand(rest, {}, cmd);
      if (values.help) return help(cmd);
      const [id, destId] = positionals(pos, ['ID', 'DEST_ID'], cmd);
      const { canceled } = await (await service(ctx)).remove(id, destId);
      ctx.output(values.json ?? false).result({ id: destId, removed: true, canceled_deliveries: canceled }, () =>
        `Removed destination ${destId} from ${id}.` +
        (canceled > 0 ? ` ${canceled} pending ${canceled === 1 ? 'delivery was' : 'deliveries were'} canceled (skipped, reason destination_removed).` : ''));
      return;
    }
    default:
      throw new UsageError(sub === undefined ? 'missing destinations command' : `unknown destinations command "${sub}"`, ['destinations']);
  }
}

/** `plugins new TYPE`: a working destination folder in the first PLUGINS_DIR folder (else the shipped plugins/). */
async function newPlugin(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['plugins', 'new'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  const [type] = positionals(pos, ['TYPE'], cmd);
  const config = ctx.config();
  let made;
  try {
    made = await scaffoldPlugin(config.newPluginsDir, config.pluginsDirs, type);
  } catch (e) {
    if (e instanceof PluginScaffoldError) throw new CliError(e.message);
    throw e;
  }
  const shown = shownPath(made.folder);
  ctx.output(values.json ?? false).result(made, () => [
    `created ${shown}/`,
    formatKeyValue([['files', made.files]], '  '),
    'next:',
    '  replace the placeholder API with the platform\'s (settings.ts, native-schema.ts, rules.json,',
    '  build-requests.ts, classify-response.ts, README.md\'s example and golden.test.ts) and keep the tests passing:',
    `    npx tracklane test ${shown}`,
    '  restart the service to load it (plugins load at start), then connect it:',
    `    npx tracklane destinations add ID --type ${made.type} --config '{"account_id": "…", "api_key": "…"}'`,
  ].join('\n'));
}

export async function runPlugins(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'new') return newPlugin(rest, ctx);
  if (sub !== 'list') throw new UsageError(sub === undefined ? 'missing plugins command' : `unknown plugins command "${sub}"`, ['plugins']);
  const cmd = ['plugins', 'list'];
  const { values, positionals: pos } = parseCommand(rest, {}, cmd);
  if (values.help) return help(cmd);
  positionals(pos, [], cmd);
  const list = [...(await plugins(ctx)).values()].map(({ plugin, folder }) => ({
    name: plugin.name,
    version: plugin.version,
    category: plugin.category,
    description: plugin.description,
    max_batch: plugin.batch.maxEvents,
    folder,
  }));
  ctx.output(values.json ?? false).result(list, () =>
    formatTable(['NAME', 'VERSION', 'CATEGORY', 'BATCH', 'DESCRIPTION'], list.map((p) => [p.name, p.version, p.category, p.max_batch, p.description])));
}
