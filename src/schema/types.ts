// Types of the standard event payload (spec "Resources and their fields") and of the
// validator's result. The normalised event is what the rest of the pipeline consumes.
import type { ValidationCode } from '../errors.ts';

/** One validation finding: an error (event refused) or a warning (event accepted). */
export interface Issue {
  /** Dotted path with bracketed indexes: `products[2].price`; `` for the whole body. */
  field: string;
  /** For errors, one of the documented codes (docs/api.md). For warnings, a descriptive code such as `DEFAULT_APPLIED`. */
  code: ValidationCode | WarningCode;
  /** A sentence a developer understands without the docs. */
  message: string;
}

export type WarningCode =
  | 'RECOMMENDED_FIELD_MISSING'
  | 'DEFAULT_APPLIED'
  | 'UNKNOWN_VALUE'
  | 'UNDEFINED_FIELD'
  | 'FIELD_RENAMED'
  | 'CONSENT_REPLACED'
  | 'URL_FALLBACK'
  | 'DUPLICATE_EVENT';

/** What the validator needs to know about the account. */
export interface ValidationContext {
  /** Event names this account may send (the nine spec names plus any the operator approved). */
  approvedEvents: ReadonlySet<string>;
  /** The account's default tax rate, used for cart_viewed products without tax_percent. */
  defaultTaxRate: number | null;
  /** The account's host, the fallback for a missing cart_viewed context.url. */
  host: string | null;
  /** How a missing or unreadable consent is read: all granted (the spec's rule) unless `denied`. */
  consentDefault?: 'granted' | 'denied';
}

export interface Cookie { name: string; value: string }
export interface Consent { analytics: boolean; personalization: boolean; marketing: boolean }

export interface Coupon {
  name: string;
  value?: number;
  tax_included?: boolean;
  /** Normalised from `tax_percent` or the documented `tax_precent`, number or numeric string. */
  tax_percent?: number;
  id?: string;
  type?: string;
  currency?: string;
  exchange_rate?: number;
  [extra: string]: unknown;
}

export interface Product {
  id: string;
  parent_id: string;
  name: string;
  parent_name: string;
  price_base: number;
  price: number;
  tax_included: boolean;
  tax_percent: number | null;
  quantity: number;
  category?: string;
  sku?: string;
  parent_sku?: string;
  gtin?: string;
  mpn?: string;
  ean?: string;
  brand?: string;
  type: string;
  /** Parsed from boolean, number or string into a boolean (true = in stock). */
  stock_status: boolean;
  stock_location?: string;
  created_at?: number;
  url?: string;
  parent_url?: string;
  image?: string;
  images?: string[];
  categories?: { name: string; id?: string }[];
  coupons?: Coupon[];
  properties?: Record<string, unknown>;
  currency?: string;
  exchange_rate?: number;
  [extra: string]: unknown;
}

export interface Shipping {
  name?: string; value: number; tax_included?: boolean; tax_percent?: number;
  id?: string | number; type?: string; currency?: string; exchange_rate?: number;
  [extra: string]: unknown;
}
export interface Payment {
  name?: string; value: number; id?: string; type?: string; currency?: string; exchange_rate?: number;
  [extra: string]: unknown;
}
export interface User {
  id?: string; email?: string; phone?: string; first_name?: string; last_name?: string;
  country?: string; region?: string; city?: string; street?: string; postal_code?: string;
  orders_total_number?: number; orders_canceled_number?: number; orders_total_value?: number;
  orders_refunded_value?: number; predicted_value?: number; created_at?: number;
  properties?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface EventContext {
  environment: 'prod' | 'dev';
  data_source?: string;
  user_agent?: string;
  /** Normalised name; the payload spells it `overide_ip` (or `override_ip`, with a warning). */
  overide_ip?: string;
  url?: string;
  landing_url?: string;
  referrer_url?: string;
  page_type?: string;
  [extra: string]: unknown;
}

/** The validated event with every default applied; the pipeline reads only this. */
export interface NormalizedEvent {
  event: {
    name: string;
    value?: number;
    currency?: string;
    exchange_rate: number;
    id?: string;
    properties?: Record<string, unknown>;
  };
  context: EventContext;
  products: Product[];
  shipping: Shipping[];
  payments: Payment[];
  coupons: Coupon[];
  user?: User;
  consent: Consent;
  cookies: Cookie[];
}

export interface ValidationResult {
  errors: Issue[];
  warnings: Issue[];
  /** Present when `errors` is empty. */
  event?: NormalizedEvent;
}
