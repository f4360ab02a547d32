// Accounts: plan tier, add-on, settings, and the access tokens that authenticate them.

export const TIERS = ['BASIC', 'FLEX', 'PRO', 'CUSTOM'] as const;
export type Tier = (typeof TIERS)[number];

/** The nine event names the payload reference names; approved for every account by default. */
export const SPEC_EVENT_NAMES = [
  'checkout_completed',
  'order_canceled',
  'lead_created',
  'lead_qualified',
  'lead_closed',
  'cart_viewed',
  'product_viewed',
  'product_added_to_cart',
  'product_removed_from_cart',
] as const;

export interface Account {
  scriptId: string;
  name: string;
  tier: Tier;
  addon: boolean;
  enabled: boolean;
  /** The site's host (URL), the fallback for a missing context.url. */
  host: string | null;
  /** ISO 3166-1 alpha-2, for national phone numbers. */
  country: string | null;
  /** Default tax percentage for cart_viewed products without tax_percent. */
  taxRate: number | null;
  /** Event names approved beyond the nine spec names. */
  extraEvents: string[];
  /** Custom-endpoint folder `customers/<slug>` this account is bound to. */
  customer: string | null;
  /** Intake requests per second allowed (endpoints 1–3); null: the service default. */
  rateLimit: number | null;
  /** Custom endpoint name → the version this account's requests get when they name none. */
  endpointPins: Record<string, number>;
  /** How an event without a valid consent object is read: all granted (the spec's rule) or all refused. */
  consentDefault: ConsentDefault;
  createdAt: number;
  updatedAt: number;
}

export const CONSENT_DEFAULTS = ['granted', 'denied'] as const;
export type ConsentDefault = typeof CONSENT_DEFAULTS[number];

export interface NewAccount {
  scriptId: string;
  name: string;
  tier: Tier;
  addon: boolean;
  host: string | null;
  country: string | null;
  taxRate: number | null;
}

export type AccountPatch = Partial<
  Pick<Account, 'name' | 'tier' | 'addon' | 'enabled' | 'host' | 'country' | 'taxRate' | 'extraEvents' | 'customer' | 'rateLimit' | 'endpointPins' | 'consentDefault'>
>;

export interface TokenRecord {
  id: number;
  scriptId: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  hash: string;
  /** First characters, to tell tokens apart in listings. */
  prefix: string;
  createdAt: number;
  /** Null while current; set when rotated away. */
  expiresAt: number | null;
}
