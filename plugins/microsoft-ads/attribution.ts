// What Microsoft Advertising reads: the msclkid click id (the `msclkid` landing-page
// parameter, else the UET tag's `_uetmsclkid` cookie, which holds `_uet` + the id) and the
// UET visitor id cookie `_uetvid`, sent as anonymousId. The Conversions API takes msclkid
// only as a UUID (8-4-4-4-12) while URLs and the cookie carry 32 hex digits, so a pure
// refine step writes every msclkid in the UUID form and drops one that is not a UUID.
import type { AttributionSpec, RefineContext } from 'tracklane/sdk';

const HEX32 = /^[0-9a-f]{32}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A click id in the form the Conversions API takes (lower-case UUID), or undefined when it is none.
 * @example msclkidUuid('DD4AFCCCB1C94A4CAD9544DD7E5006AB') // 'dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab'
 */
export function msclkidUuid(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  if (UUID.test(v)) return v;
  if (!HEX32.test(v)) return undefined;
  return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`;
}

/**
 * `_uetmsclkid` (`_uet` + 32 hex, as the UET tag writes it) → the click id as a UUID.
 * @example parseUetMsclkid('_uetb1240587f865192a03586c5b000314f5') // 'b1240587-f865-192a-0358-6c5b000314f5'
 */
export function parseUetMsclkid(value: string): string | undefined {
  return msclkidUuid(value.trim().replace(/^_uet/, ''));
}

/**
 * `_uetvid` (the UET tag's visitor id, a v1 UUID in 32 hex) → anonymousId, kept as written.
 * @example parseUetVid('fe910b70374111f185174b19733c8403') // 'fe910b70374111f185174b19733c8403'
 */
export function parseUetVid(value: string): string | undefined {
  const v = value.trim();
  return HEX32.test(v) || UUID.test(v) ? v : undefined;
}

/** The msclkid read from the URL is kept exactly by the extractor; here it becomes a UUID or goes. */
export function refineMsclkid(ctx: RefineContext): void {
  const id = ctx.ids.msclkid;
  if (typeof id !== 'string') return;
  const uuid = msclkidUuid(id);
  if (uuid !== undefined) {
    ctx.ids.msclkid = uuid;
    return;
  }
  delete ctx.ids.msclkid;
  ctx.warn({
    field: 'context.url', code: 'IDENTIFIER_INVALID', message: 'msclkid is not a UUID; not sent',
    sentence: 'msclkid in the page URL is not a Microsoft click id (a UUID); not sent',
  });
}

export const MICROSOFT_ADS_ATTRIBUTION: AttributionSpec = {
  ids: {
    msclkid: [{ param: 'msclkid' }, { cookie: '_uetmsclkid', parse: parseUetMsclkid }],
    uetvid: [{ cookie: '_uetvid', parse: parseUetVid }],
  },
  refine: refineMsclkid,
};
