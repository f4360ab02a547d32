// The normalisers by name, all with one signature, so identifier tables can refer to
// them as data (`normalise: 'phone'`).
import { normaliseCity } from './city.ts';
import { normaliseCountry } from './country.ts';
import { normaliseEmail } from './email.ts';
import { normaliseExternalId } from './external-id.ts';
import { normaliseName } from './name.ts';
import { normalisePhone } from './phone.ts';
import { normalisePostalCode } from './postal-code.ts';
import { normaliseRegion } from './region.ts';
import { normaliseStreet } from './street.ts';
import type { NormaliseContext } from './types.ts';

/** Returns the normalised string, or null when the value is unusable for that platform. */
export type Normaliser = (raw: string, ctx: NormaliseContext) => string | null;

export const NORMALISERS = {
  email: (raw, ctx) => normaliseEmail(raw, ctx.platform),
  phone: (raw, ctx) => normalisePhone(raw, ctx.platform, ctx),
  name: (raw, ctx) => normaliseName(raw, ctx.platform),
  street: (raw, ctx) => normaliseStreet(raw, ctx.platform),
  city: (raw, ctx) => normaliseCity(raw, ctx.platform),
  region: (raw, ctx) => normaliseRegion(raw, ctx.platform, ctx),
  postalCode: (raw, ctx) => normalisePostalCode(raw, ctx.platform, ctx),
  country: (raw, ctx) => normaliseCountry(raw, ctx.platform),
  externalId: (raw, ctx) => normaliseExternalId(raw, ctx.platform),
} as const satisfies Record<string, Normaliser>;

export type NormaliserName = keyof typeof NORMALISERS;
