// What Google Ads reads: gclid from the landing URL or the `_gcl_aw` cookie, gbraid and
// wbraid from the URL. Google Ads refuses a conversion with both gbraid and wbraid, so
// only wbraid (the web one) is kept then.
import { cleanClickId, type AttributionSpec } from 'tracklane/sdk';

/**
 * `_gcl_aw` (`GCL.<unix s>.<gclid>`) → gclid. Google does not document the format; best-effort.
 * @example parseGclAw('GCL.1700000000.Cj0KCQiA') // 'Cj0KCQiA'
 */
export function parseGclAw(value: string): string | undefined {
  const m = /^GCL\.\d+\.(.+)$/.exec(value.trim());
  return m ? cleanClickId(m[1]) : undefined;
}

export const GOOGLE_ADS_ATTRIBUTION: AttributionSpec = {
  ids: {
    gclid: [{ param: 'gclid' }, { cookie: '_gcl_aw', parse: parseGclAw }],
    gbraid: [{ param: 'gbraid' }],
    wbraid: [{ param: 'wbraid' }],
  },
  refine(ctx) {
    if (ctx.ids.gbraid === undefined || ctx.ids.wbraid === undefined) return;
    delete ctx.ids.gbraid;
    ctx.warn({
      field: 'context.url', code: 'CLICK_ID_CONFLICT', message: 'both gbraid and wbraid present; kept wbraid (web conversions)',
      sentence: 'both gbraid and wbraid in the URL; only wbraid sent',
    });
  },
};
