// The generic normalisers by name, all with one signature, so a destination's identifier
// table can refer to them as data (`normalise: 'phone'`); each reads its form from ctx.forms.
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

/** Returns the normalised string, or null when the value is unusable in that form. */
export type Normaliser = (raw: string, ctx: NormaliseContext) => string | null;

export const NORMALISERS = {
  email: (raw, ctx) => normaliseEmail(raw, ctx.forms.email),
  phone: (raw, ctx) => normalisePhone(raw, ctx.forms.phone, ctx),
  name: (raw, ctx) => normaliseName(raw, ctx.forms.name),
  street: (raw) => normaliseStreet(raw),
  city: (raw, ctx) => normaliseCity(raw, ctx.forms.city),
  region: (raw, ctx) => normaliseRegion(raw, ctx.forms.region, ctx),
  postalCode: (raw, ctx) => normalisePostalCode(raw, ctx.forms.postalCode, ctx),
  country: (raw, ctx) => normaliseCountry(raw, ctx.forms.country),
  externalId: (raw, ctx) => normaliseExternalId(raw, ctx.forms.externalId),
} as const satisfies Record<string, Normaliser>;

export type NormaliserName = keyof typeof NORMALISERS;
