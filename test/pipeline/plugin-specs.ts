// The real plugins' identifier and attribution specs, for the core's pipeline tests: the
// samples written per platform family run through the data the plugins now declare.
import ga4 from '../../plugins/ga4/index.ts';
import googleAds from '../../plugins/google-ads/index.ts';
import metaCapi from '../../plugins/meta-capi/index.ts';
import tiktok from '../../plugins/tiktok/index.ts';
import type { NamedAttributionSpec } from '../../src/attribution/index.ts';
import type { IdentifierSpec } from '../../src/identifiers/index.ts';

export type Family = 'google' | 'meta' | 'tiktok';

/** The identifier spec of the plugin that stands for each family (GA4 for google). */
export const SPECS: Readonly<Record<Family, IdentifierSpec>> = {
  google: ga4.identifiers!,
  meta: metaCapi.identifiers!,
  tiktok: tiktok.identifiers!,
};

/** Every attribution-reading plugin's spec, in folder order, as the registry gives them. */
export const ATTRIBUTION_SPECS: NamedAttributionSpec[] = [ga4, googleAds, metaCapi, tiktok].map((p) => ({ name: p.name, spec: p.attribution! }));
