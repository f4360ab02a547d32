// Operator actions on accounts, shared by the CLI and any admin surface: input is
// validated here, so every caller gets the same rules and the same messages.
import { CONSENT_DEFAULTS, SPEC_EVENT_NAMES, type Account, type AccountPatch, type ConsentDefault, type Tier } from './types.ts';
import type { Store } from '../store/types.ts';
import { hashToken, newAccessToken, newScriptId, tokenDisplayPrefix } from './credentials.ts';
import { isTier } from './tiers.ts';
import { endpointNameProblem, pinMap } from './endpoint-pins.ts';

export class AccountInputError extends Error {
  override name = 'AccountInputError';
}

export interface CreateAccountInput {
  name: string;
  tier?: string;
  addon?: boolean;
  host?: string | null;
  country?: string | null;
  taxRate?: number | null;
}

export interface UpdateAccountInput {
  name?: string;
  tier?: string;
  addon?: boolean;
  enabled?: boolean;
  host?: string | null;
  country?: string | null;
  taxRate?: number | null;
  approveEvents?: string[];
  customer?: string | null;
  /** Requests per second on endpoints 1–3; null: the service default. */
  rateLimit?: number | null;
  /** Custom endpoint versions to pin (endpoint name → version), or to unpin (→ null). */
  pinEndpoints?: Record<string, number | null>;
  /** How an event without a valid consent object is read: `granted` or `denied`. */
  consentDefault?: string;
}

const EVENT_NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;
const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;

function checkTier(t: string): Tier {
  const up = t.toUpperCase();
  if (!isTier(up)) throw new AccountInputError(`tier must be one of BASIC, FLEX, PRO, CUSTOM, got "${t}"`);
  return up;
}
function checkHost(h: string | null | undefined): string | null {
  if (h === null || h === undefined || h === '') return null;
  let u: URL;
  try {
    u = new URL(h);
  } catch {
    throw new AccountInputError(`host must be an absolute http(s) URL such as https://shop.example, got "${h}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AccountInputError(`host must use http or https, got "${h}"`);
  return u.origin;
}
function checkCountry(c: string | null | undefined): string | null {
  if (c === null || c === undefined || c === '') return null;
  if (!/^[A-Za-z]{2}$/.test(c)) throw new AccountInputError(`country must be an ISO 3166-1 alpha-2 code such as RO or US, got "${c}"`);
  return c.toUpperCase();
}
function checkTaxRate(p: number | null | undefined): number | null {
  if (p === null || p === undefined) return null;
  if (!Number.isFinite(p) || p < 0 || p > 100) throw new AccountInputError(`tax rate must be a number from 0 to 100, got ${p}`);
  return p;
}

/** All event names the account may send. */
export function approvedEvents(a: Account): Set<string> {
  return new Set<string>([...SPEC_EVENT_NAMES, ...a.extraEvents]);
}

/** An update's result: the account, and the pins it dropped because the account changed customer. */
export interface UpdatedAccount {
  account: Account;
  /**
   * Endpoint pins of the customer the account was bound to, removed because it is bound to
   * another one (or none) now: a pin names an endpoint of the customer it was set for, and
   * the new customer's endpoint of the same name is another endpoint. Empty otherwise.
   */
  unpinned: Record<string, number>;
}

export interface CreatedAccount {
  account: Account;
  /** Shown once; only its hash is stored. */
  accessToken: string;
}

export function createAccountService(store: Store, now: () => number = Date.now) {
  async function require(scriptId: string): Promise<Account> {
    const a = await store.accounts.get(scriptId);
    if (!a) throw new AccountInputError(`no account with script id "${scriptId}"`);
    return a;
  }

  /** update(), saying which pins a change of customer removed. */
  async function updateReporting(scriptId: string, input: UpdateAccountInput): Promise<UpdatedAccount> {
    const current = await require(scriptId);
    const patch: AccountPatch = {};
    let unpinned: Record<string, number> = {};
    if (input.name !== undefined) {
      if (!input.name.trim()) throw new AccountInputError('name must not be empty');
      patch.name = input.name.trim();
    }
    if (input.tier !== undefined) patch.tier = checkTier(input.tier);
    if (input.addon !== undefined) patch.addon = input.addon;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.host !== undefined) patch.host = checkHost(input.host);
    if (input.country !== undefined) patch.country = checkCountry(input.country);
    if (input.taxRate !== undefined) patch.taxRate = checkTaxRate(input.taxRate);
    if (input.customer !== undefined) {
      if (input.customer !== null && !SLUG_RE.test(input.customer)) {
        throw new AccountInputError(`customer must be a folder slug of lowercase letters, digits and dashes, got "${input.customer}"`);
      }
      patch.customer = input.customer;
      if (input.customer !== current.customer && Object.keys(current.endpointPins).length > 0) {
        unpinned = { ...current.endpointPins };
        patch.endpointPins = pinMap({});
      }
    }
    if (input.rateLimit !== undefined) {
      if (input.rateLimit !== null && (!Number.isInteger(input.rateLimit) || input.rateLimit < 1 || input.rateLimit > 1_000_000)) {
        throw new AccountInputError(`rate limit must be a whole number of requests per second from 1 to 1000000, got ${input.rateLimit}`);
      }
      patch.rateLimit = input.rateLimit;
    }
    if (input.consentDefault !== undefined) {
      if (!(CONSENT_DEFAULTS as readonly string[]).includes(input.consentDefault)) {
        throw new AccountInputError(`consent default must be granted or denied, got "${input.consentDefault}"`);
      }
      patch.consentDefault = input.consentDefault as ConsentDefault;
    }
    if (input.pinEndpoints !== undefined && Object.keys(input.pinEndpoints).length > 0) {
      const pins = pinMap(patch.endpointPins ?? current.endpointPins);
      for (const [endpoint, version] of Object.entries(input.pinEndpoints)) {
        const problem = endpointNameProblem(endpoint);
        if (problem !== null) throw new AccountInputError(problem);
        if (version === null) delete pins[endpoint];
        else if (!Number.isInteger(version) || version < 1 || version > 9999) {
          throw new AccountInputError(`endpoint version must be a whole number from 1 to 9999, got ${version}`);
        } else pins[endpoint] = version;
      }
      patch.endpointPins = pins;
    }
    if (input.approveEvents && input.approveEvents.length > 0) {
      for (const e of input.approveEvents) {
        if (!EVENT_NAME_RE.test(e)) throw new AccountInputError(`event name must be snake_case (a-z, 0-9, _), got "${e}"`);
      }
      const known = approvedEvents(current);
      patch.extraEvents = [...current.extraEvents, ...input.approveEvents.filter((e) => !known.has(e))];
    }
    return { account: (await store.accounts.update(scriptId, patch))!, unpinned };
  }

  return {
    async create(input: CreateAccountInput): Promise<CreatedAccount> {
      const name = input.name?.trim();
      if (!name) throw new AccountInputError('name is required');
      const fields = {
        name,
        tier: checkTier(input.tier ?? 'FLEX'),
        addon: input.addon ?? false,
        host: checkHost(input.host),
        country: checkCountry(input.country),
        taxRate: checkTaxRate(input.taxRate),
      };
      const token = newAccessToken();
      // A collision among 36^8 ids is unlikely but not impossible: draw again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const scriptId = newScriptId();
        if (await store.accounts.get(scriptId)) continue;
        const account = await store.accounts.create({ scriptId, ...fields }, hashToken(token), tokenDisplayPrefix(token));
        return { account, accessToken: token };
      }
      throw new Error('could not draw an unused script id');
    },

    get: (scriptId: string) => require(scriptId),
    list: () => store.accounts.list(),

    async update(scriptId: string, input: UpdateAccountInput): Promise<Account> {
      return (await updateReporting(scriptId, input)).account;
    },

    updateReporting,

    /** Issues a new token; every older token keeps working for `graceHours`. */
    async rotateToken(scriptId: string, graceHours = 24): Promise<{ accessToken: string; previousTokenExpiresAt: number }> {
      await require(scriptId);
      if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > 24 * 30) {
        throw new AccountInputError(`grace hours must be between 0 and 720, got ${graceHours}`);
      }
      const t = now();
      const token = newAccessToken();
      const previousTokenExpiresAt = t + Math.round(graceHours * 3_600_000);
      await store.accounts.rotateToken(scriptId, hashToken(token), tokenDisplayPrefix(token), t, previousTokenExpiresAt);
      return { accessToken: token, previousTokenExpiresAt };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
