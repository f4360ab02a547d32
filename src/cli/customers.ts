// `tracklane customers list` and `customers new SLUG ENDPOINT`: what CUSTOMERS_DIR holds
// (loaded and checked exactly as the server loads it), and a scaffolded working endpoint.
import { relative } from 'node:path';
import { listEndpoints, loadCustomers } from '../customers/load-customers.ts';
import { scaffoldEndpoint, ScaffoldError } from '../customers/scaffold.ts';
import { endpointJson } from '../customers/describe-endpoint.ts';
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatKeyValue, formatTable } from './output.ts';
import { usageFor } from './usage.ts';

function help(cmd: string[]): void {
  process.stdout.write(usageFor(...cmd));
}

async function list(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['customers', 'list'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  positionals(pos, [], cmd);
  const items = listEndpoints(await loadCustomers(ctx.config().customersDir)).map(endpointJson);
  ctx.output(values.json ?? false).result(items, () =>
    items.length === 0
      ? `no custom endpoints under ${ctx.config().customersDir}`
      : formatTable(['CUSTOMER', 'ENDPOINT', 'AUTH', 'PRODUCTION/MIN', 'TEST/MIN', 'DESCRIPTION'], items.map((e) => [
        e.customer, e.endpoint, e.auth, e.rate_limit.production?.per_minute ?? 'account rate', e.rate_limit.test.per_minute, e.description,
      ])));
}

async function create(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['customers', 'new'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  const [slug, endpoint] = positionals(pos, ['SLUG', 'ENDPOINT'], cmd);
  let made;
  try {
    made = await scaffoldEndpoint(ctx.config().customersDir, slug, endpoint);
  } catch (e) {
    if (e instanceof ScaffoldError) throw new CliError(e.message);
    throw e;
  }
  const shown = relative(process.cwd(), made.folder) || made.folder;
  ctx.output(values.json ?? false).result(made, () => [
    `created ${shown}/`,
    formatKeyValue([['path', made.path], ['files', made.files]], '  '),
    'next:',
    `  edit schema.json, handler.ts and example.json together; keep the test passing:`,
    `    npx mocha --no-config --node-option import=tsx ${shown}/${made.endpoint}.test.ts   (npm test runs it too)`,
    `  put an account on the CUSTOM plan and bind it: npx tracklane accounts update ID --tier CUSTOM --customer ${made.customer}`,
    '  a running service loads the new endpoint within a few seconds (no restart)',
  ].join('\n'));
}

export async function runCustomers(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'list') return list(rest, ctx);
  if (sub === 'new') return create(rest, ctx);
  throw new UsageError(sub === undefined ? 'missing customers command' : `unknown customers command "${sub}"`, ['customers']);
}
