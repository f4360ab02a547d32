// `tracklane customers list` and `customers new SLUG ENDPOINT`: what CUSTOMERS_DIR holds
// (loaded and checked exactly as the server loads it), and a scaffolded working endpoint.
import { listEndpoints, loadCustomers } from '../customers/load-customers.ts';
import { scaffoldEndpoint, ScaffoldError } from '../customers/scaffold.ts';
import { addEndpointVersion } from '../customers/new-version.ts';
import { endpointJson, endpointUsageJson, type EndpointJson } from '../customers/describe-endpoint.ts';
import type { LoadedEndpoint } from '../customers/types.ts';
import type { CustomRecordStore } from '../store/custom-record-contract.ts';
import { isPgStore } from '../store/postgres/pg-store.ts';
import { pgCustomRecordStore } from '../store/postgres/custom-records.ts';
import { openCustomRecordStore } from '../store/sqlite/custom-records.ts';
import { sqliteFile } from '../store/open-store.ts';
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatKeyValue, formatTable, shownPath } from './output.ts';
import { usageFor } from './usage.ts';

function help(cmd: string[]): void {
  process.stdout.write(usageFor(...cmd));
}

async function list(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['customers', 'list'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  positionals(pos, [], cmd);
  const endpoints = listEndpoints(await loadCustomers(ctx.config().customersDirs));
  const items = endpoints.length === 0 ? [] : await withUsage(endpoints, ctx);
  ctx.output(values.json ?? false).result(items, () =>
    items.length === 0
      ? `no custom endpoints under ${ctx.config().customersDirs.join(', ')}`
      : formatTable(['CUSTOMER', 'ENDPOINT', 'AUTH', 'PRODUCTION/MIN', 'TEST/MIN', 'VERSIONS', 'DESCRIPTION'], items.map((e) => [
        e.customer, e.endpoint, e.auth, e.rate_limit.production?.per_minute ?? 'account rate', e.rate_limit.test.per_minute, versionsText(e), e.description,
      ])));
}

/** `1 deprecated (uses: 12 production, 0 test), 2 current (uses: 40 production, 3 test)`: every account's, since each version first answered. */
function versionsText(e: EndpointJson): string {
  return e.versions.map((v) => {
    const uses = (env: string) => v.usage?.reduce((n, u) => n + (u.env === env ? u.uses : 0), 0) ?? 0;
    return `${v.version} ${v.state}${v.usage === undefined ? '' : ` (uses: ${uses('production')} production, ${uses('test')} test)`}`;
  }).join(', ');
}

/** Each endpoint with its versions' uses and pins from the store; without them (said on stderr) when the store cannot be read. */
async function withUsage(endpoints: LoadedEndpoint[], ctx: CliContext): Promise<EndpointJson[]> {
  let records: CustomRecordStore | undefined;
  try {
    const store = await ctx.store();
    records = isPgStore(store) ? pgCustomRecordStore(store.pool) : openCustomRecordStore(sqliteFile(ctx.config()));
    const [usage, accounts] = await Promise.all([records.listUsage(), store.accounts.list()]);
    return endpoints.map((ep) => endpointUsageJson(ep, usage, accounts));
  } catch (err) {
    process.stderr.write(`tracklane: version uses not shown, the store could not be read: ${(err as Error).message}\n`);
    return endpoints.map(endpointJson);
  } finally {
    await records?.close();
  }
}

async function create(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['customers', 'new'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  const [slug, endpoint] = positionals(pos, ['SLUG', 'ENDPOINT'], cmd);
  let made;
  try {
    made = await scaffoldEndpoint(ctx.config(), slug, endpoint);
  } catch (e) {
    if (e instanceof ScaffoldError) throw new CliError(e.message);
    throw e;
  }
  const shown = shownPath(made.folder);
  ctx.output(values.json ?? false).result(made, () => [
    `created ${shown}/`,
    formatKeyValue([['path', made.path], ['files', made.files]], '  '),
    'next:',
    `  edit versions/1/schema.json, handler.ts and example.json together; keep the test passing:`,
    `    npx tracklane test ${shown}`,
    `  put an account on the CUSTOM plan and bind it: npx tracklane accounts update ID --tier CUSTOM --customer ${made.customer}`,
    '  a running service loads the new endpoint within a few seconds (no restart)',
  ].join('\n'));
}

async function newVersion(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['customers', 'new-version'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  const [slug, endpoint] = positionals(pos, ['SLUG', 'ENDPOINT'], cmd);
  let made;
  try {
    made = await addEndpointVersion(ctx.config().customersDirs, slug, endpoint);
  } catch (e) {
    if (e instanceof ScaffoldError) throw new CliError(e.message);
    throw e;
  }
  const shown = shownPath(made.folder);
  ctx.output(values.json ?? false).result(made, () => [
    `created ${shown}/ from version ${made.from}, listed active in endpoint.json (version ${made.from} stays current)`,
    'next:',
    `  change the shape in its schema.json, handler.ts and example.json; clients reach it with X-Service-Endpoint-Version: ${made.version} (or ?version=${made.version})`,
    `  pin the accounts that keep sending version ${made.from}: npx tracklane accounts update ID --pin-endpoint ${made.endpoint}=${made.from}`,
    `  then make it current in endpoint.json ("current_version": ${made.version}) and deprecate ${made.from} (see customers/README.md, "Changing an endpoint")`,
    '  a running service loads it within a few seconds (no restart)',
  ].join('\n'));
}

export async function runCustomers(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'list') return list(rest, ctx);
  if (sub === 'new') return create(rest, ctx);
  if (sub === 'new-version') return newVersion(rest, ctx);
  throw new UsageError(sub === undefined ? 'missing customers command' : `unknown customers command "${sub}"`, ['customers']);
}
