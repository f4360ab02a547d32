// `tracklane accounts …`: create, list, show, update and rotate-token, on top of the
// account service, which owns the validation rules and their messages.
import { approvedEvents, createAccountService, type AccountService } from '../accounts/account-service.ts';
import type { Account } from '../accounts/types.ts';
import type { Store } from '../store/types.ts';
import { exclusive, numberFlag, parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { UsageError, formatKeyValue, formatTable, iso } from './output.ts';
import { usageFor } from './usage.ts';
import { checkPins, parsePins } from './endpoint-pins.ts';
import { cliBaseUrl } from '../service-url.ts';

/** The guaranteed JSON shape of an account (docs/api.md, "CLI JSON output"). */
export interface AccountJson {
  script_id: string;
  name: string;
  tier: string;
  addon: boolean;
  enabled: boolean;
  base_url: string;
  host: string | null;
  country: string | null;
  tax_rate: number | null;
  /** Every event name the account may send: the nine standard names plus approved extras. */
  approved_events: string[];
  customer: string | null;
  /** Requests per second on endpoints 1–3; null: the service default (RATE_LIMIT_DEFAULT). */
  rate_limit: number | null;
  /** Custom endpoint name → the version pinned for this account's requests that name none. */
  endpoint_pins: Record<string, number>;
  /** How an event without a valid consent object is read: `granted` (the spec's rule) or `denied`. */
  consent_default: string;
  created_at: string;
  updated_at: string;
}

export function accountJson(a: Account, baseUrl: string): AccountJson {
  return {
    script_id: a.scriptId,
    name: a.name,
    tier: a.tier,
    addon: a.addon,
    enabled: a.enabled,
    base_url: baseUrl,
    host: a.host,
    country: a.country,
    tax_rate: a.taxRate,
    approved_events: [...approvedEvents(a)],
    customer: a.customer,
    rate_limit: a.rateLimit,
    endpoint_pins: a.endpointPins,
    consent_default: a.consentDefault,
    created_at: iso(a.createdAt)!,
    updated_at: iso(a.updatedAt)!,
  };
}

function accountRows(a: AccountJson): [string, unknown][] {
  return [
    ['script_id', a.script_id],
    ['name', a.name],
    ['tier', a.tier],
    ['addon', a.addon],
    ['enabled', a.enabled],
    ['base_url', a.base_url],
    ['host', a.host],
    ['country', a.country],
    ['tax_rate', a.tax_rate],
    ['approved_events', a.approved_events],
    ['customer', a.customer],
    ['rate_limit', a.rate_limit ?? 'default'],
    ['endpoint_pins', Object.entries(a.endpoint_pins).map(([e, v]) => `${e}=${v}`).join(', ') || 'none'],
    ['consent_default', a.consent_default],
    ['created_at', a.created_at],
    ['updated_at', a.updated_at],
  ];
}

type Command = (args: string[], ctx: CliContext, svc: () => Promise<AccountService>) => Promise<void>;

const create: Command = async (args, ctx, svc) => {
  const cmd = ['accounts', 'create'];
  const { values, positionals: pos } = parseCommand(args, {
    name: { type: 'string' },
    tier: { type: 'string' },
    addon: { type: 'boolean' },
    host: { type: 'string' },
    country: { type: 'string' },
    'tax-rate': { type: 'string' },
  }, cmd);
  if (values.help) return help(cmd);
  positionals(pos, [], cmd);
  if (values.name === undefined) throw new UsageError('--name is required', cmd);
  const taxRate = values['tax-rate'] === undefined ? null : numberFlag('tax-rate', values['tax-rate']);
  const out = ctx.output(values.json ?? false);
  const { account, accessToken } = await (await svc()).create({
    name: values.name,
    tier: values.tier,
    addon: values.addon ?? false,
    host: values.host ?? null,
    country: values.country ?? null,
    taxRate,
  });
  const a = accountJson(account, cliBaseUrl(ctx.config()));
  out.result({ ...a, access_token: accessToken }, () =>
    [
      `Created account ${a.script_id}.`,
      '',
      formatKeyValue([
        ['script_id', a.script_id],
        ['access_token', accessToken],
        ['base_url', a.base_url],
      ], '  '),
      '',
      'The access token is shown only this once; only its hash is stored. Keep it now.',
      '',
      formatKeyValue(accountRows(a).filter(([k]) => k !== 'script_id' && k !== 'base_url'), '  '),
    ].join('\n'));
};

const list: Command = async (args, ctx, svc) => {
  const cmd = ['accounts', 'list'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  positionals(pos, [], cmd);
  const out = ctx.output(values.json ?? false);
  const base = cliBaseUrl(ctx.config());
  const accounts = (await (await svc()).list()).map((a) => accountJson(a, base));
  out.result(accounts, () =>
    accounts.length === 0
      ? 'No accounts. Create one with: tracklane accounts create --name NAME'
      : formatTable(
          ['SCRIPT_ID', 'NAME', 'TIER', 'ADDON', 'ENABLED', 'CUSTOMER', 'CREATED_AT'],
          accounts.map((a) => [a.script_id, a.name, a.tier, a.addon, a.enabled, a.customer, a.created_at]),
        ));
};

const show: Command = async (args, ctx, svc) => {
  const cmd = ['accounts', 'show'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return help(cmd);
  const [id] = positionals(pos, ['ID'], cmd);
  const out = ctx.output(values.json ?? false);
  const a = accountJson(await (await svc()).get(id), cliBaseUrl(ctx.config()));
  const tokens = await tokenSummary(await ctx.store(), id);
  out.result({ ...a, tokens }, () =>
    formatKeyValue([
      ...accountRows(a),
      ['tokens', tokens.map((t) => `${t.prefix}… ${t.expires_at ? `(expires ${t.expires_at})` : '(current)'}`)],
    ]));
};

/** Prefixes of the tokens that still work; never their hashes. */
async function tokenSummary(store: Store, scriptId: string) {
  const tokens = await store.accounts.activeTokens(scriptId, Date.now());
  return tokens.map((t) => ({ prefix: t.prefix, created_at: iso(t.createdAt), expires_at: iso(t.expiresAt) }));
}

const update: Command = async (args, ctx, svc) => {
  const cmd = ['accounts', 'update'];
  const { values, positionals: pos } = parseCommand(args, {
    name: { type: 'string' },
    tier: { type: 'string' },
    addon: { type: 'boolean' },
    'no-addon': { type: 'boolean' },
    enable: { type: 'boolean' },
    disable: { type: 'boolean' },
    host: { type: 'string' },
    country: { type: 'string' },
    'tax-rate': { type: 'string' },
    'approve-event': { type: 'string', multiple: true },
    customer: { type: 'string' },
    'no-customer': { type: 'boolean' },
    'rate-limit': { type: 'string' },
    'pin-endpoint': { type: 'string', multiple: true },
    'unpin-endpoint': { type: 'string', multiple: true },
    'consent-default': { type: 'string' },
  }, cmd);
  if (values.help) return help(cmd);
  const [id] = positionals(pos, ['ID'], cmd);
  const pins = parsePins(values['pin-endpoint'], values['unpin-endpoint'], cmd);
  exclusive(values, 'addon', 'no-addon', cmd);
  exclusive(values, 'enable', 'disable', cmd);
  exclusive(values, 'customer', 'no-customer', cmd);
  const consentDefault = values['consent-default'];
  if (consentDefault !== undefined && consentDefault !== 'granted' && consentDefault !== 'denied') {
    throw new UsageError(`--consent-default must be granted or denied, got "${consentDefault}"`, cmd);
  }
  const input = {
    name: values.name,
    tier: values.tier,
    addon: values.addon ? true : values['no-addon'] ? false : undefined,
    enabled: values.enable ? true : values.disable ? false : undefined,
    host: values.host,
    country: values.country,
    taxRate: values['tax-rate'] === undefined ? undefined : numberFlag('tax-rate', values['tax-rate']),
    approveEvents: values['approve-event'],
    customer: values['no-customer'] ? null : values.customer === undefined ? undefined : values.customer || null,
    rateLimit: values['rate-limit'] === undefined ? undefined : numberFlag('rate-limit', values['rate-limit']),
    pinEndpoints: pins,
    consentDefault,
  };
  if (Object.values(input).every((v) => v === undefined)) {
    throw new UsageError('nothing to change: give at least one option', cmd);
  }
  const out = ctx.output(values.json ?? false);
  if (pins) {
    const current = await (await svc()).get(id);
    checkPins(ctx.config().customersDirs, input.customer === undefined ? current.customer : input.customer, pins);
  }
  const { account, unpinned } = await (await svc()).updateReporting(id, input);
  const a = { ...accountJson(account, cliBaseUrl(ctx.config())), unpinned_endpoints: unpinned };
  const dropped = Object.entries(unpinned).map(([e, v]) => `${e}=${v}`).join(', ');
  out.result(a, () => `Updated account ${a.script_id}.` +
    (dropped === '' ? '' : `\nUnpinned ${dropped}: ${pinsDroppedReason(a.customer)}.`) +
    `\n\n${formatKeyValue(accountRows(a), '  ')}`);
};

/** Why a change of customer dropped the pins: they named the old customer's endpoints. */
const pinsDroppedReason = (customer: string | null): string =>
  `those pins named the previous customer's endpoints, and the account is now bound to ${customer === null ? 'no customer' : `customer ${customer}`}`;

const rotateToken: Command = async (args, ctx, svc) => {
  const cmd = ['accounts', 'rotate-token'];
  const { values, positionals: pos } = parseCommand(args, { 'grace-hours': { type: 'string' } }, cmd);
  if (values.help) return help(cmd);
  const [id] = positionals(pos, ['ID'], cmd);
  const raw = values['grace-hours'];
  const grace = raw === undefined ? 24 : numberFlag('grace-hours', raw);
  if (grace === null) throw new UsageError('--grace-hours needs a number of hours', cmd);
  const out = ctx.output(values.json ?? false);
  const r = await (await svc()).rotateToken(id, grace);
  const data = { script_id: id, access_token: r.accessToken, previous_token_expires_at: iso(r.previousTokenExpiresAt) };
  out.result(data, () =>
    [
      `New access token for ${id}.`,
      '',
      formatKeyValue([
        ['access_token', data.access_token],
        ['previous_token_expires_at', data.previous_token_expires_at],
      ], '  '),
      '',
      'The access token is shown only this once; only its hash is stored. Keep it now.',
      grace === 0 ? 'Older tokens stopped working now.' : `Older tokens keep working until ${data.previous_token_expires_at}.`,
    ].join('\n'));
};

async function help(cmd: string[]): Promise<void> {
  process.stdout.write(usageFor(...cmd));
}

const COMMANDS: Record<string, Command> = { create, list, show, update, 'rotate-token': rotateToken };

/** Runs `accounts <command> …`. */
export async function runAccounts(args: string[], ctx: CliContext): Promise<void> {
  const [name, ...rest] = args;
  if (name === '--help' || name === '-h') return help(['accounts']);
  if (name === undefined) throw new UsageError('accounts needs a command', ['accounts']);
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(`unknown command "accounts ${name}"`, ['accounts']);
  let service: AccountService | undefined;
  await command(rest, ctx, async () => (service ??= createAccountService(await ctx.store())));
}
