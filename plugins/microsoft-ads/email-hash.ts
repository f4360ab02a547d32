// Microsoft's e-mail normal form goes further than the shared normaliser: after trimming
// and lower-casing, every dot and any `+alias` leave the local part, whatever the domain
// ("To hash an email address" in the CAPI guide). The pipeline has already validated the
// address and hashed it in the shared form; this re-hashes the plain address in
// Microsoft's form, and lets a value that arrived hashed pass as the pipeline gave it.
import { isSha256Hex, normaliseEmail, sha256Hex, type OutgoingItem } from 'tracklane/sdk';

/**
 * The address in Microsoft's form, or null when it is not an address.
 * @example microsoftEmail(' John.Doe+Shop@Contoso.com ') // 'johndoe@contoso.com'
 */
export function microsoftEmail(raw: string): string | null {
  const email = normaliseEmail(raw, { removeSpaces: true });
  if (email === null) return null;
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at).split('+')[0].replaceAll('.', '');
  return local === '' ? null : `${local}${email.slice(at)}`;
}

/** `userData.em` for this item: the plain address hashed in Microsoft's form, else the pipeline's value. */
export function emailHash(item: OutgoingItem): string | undefined {
  const fromPipeline = item.identifiers['userData.em'];
  const hashed = typeof fromPipeline === 'string' ? fromPipeline : fromPipeline?.[0];
  if (hashed === undefined) return undefined;
  const raw = item.event.user?.email;
  if (typeof raw !== 'string' || isSha256Hex(raw.trim())) return hashed;
  const email = microsoftEmail(raw);
  return email === null ? hashed : sha256Hex(email);
}
