// Which version of a custom endpoint serves a request: the X-Service-Endpoint-Version header
// or ?version=, else the account's pin, else the endpoint's current version. A version the
// endpoint does not serve is a 400 naming the ones it does; a deprecated one answers with
// Deprecation (RFC 9745) and Sunset (RFC 8594) headers and a message.
import { CustomValidationError } from './custom-validation-error.ts';
import { describeServed } from './endpoint-versions.ts';
import type { EndpointVersion, LoadedEndpoint } from './types.ts';

export const VERSION_HEADER = 'X-Service-Endpoint-Version';
const VERSION_RE = /^[1-9][0-9]{0,3}$/;

export interface VersionRequest {
  /** The header's value ('' when absent). */
  header: string;
  /** ?version= as parsed (an array when repeated). */
  query: string | string[] | undefined;
  /** The account's pin for this endpoint, if any. */
  pin: number | undefined;
}

function refuse(ep: LoadedEndpoint, field: string, message: string): CustomValidationError {
  return new CustomValidationError([{
    field,
    expected_format: `a version this endpoint serves: ${describeServed(ep.versions.values())}; without one, the current version`,
    message,
  }]);
}

/** The version that serves the request, or the 400 saying which ones are served. */
export function pickVersion(ep: LoadedEndpoint, req: VersionRequest): EndpointVersion {
  if (Array.isArray(req.query)) throw refuse(ep, 'version', 'The query parameter version is given more than once');
  const header = req.header.trim();
  if (header !== '' && req.query !== undefined && header !== req.query) {
    throw refuse(ep, VERSION_HEADER, `The ${VERSION_HEADER} header (${header.slice(0, 16)}) and ?version= (${req.query.slice(0, 16)}) disagree`);
  }
  const [raw, field] = header !== '' ? [header, VERSION_HEADER] : req.query !== undefined ? [req.query, 'version'] : [undefined, 'version'];
  if (raw === undefined) {
    if (req.pin === undefined) return ep.versions.get(ep.current)!;
    const pinned = ep.versions.get(req.pin);
    if (!pinned) {
      throw refuse(ep, 'version', `This account is pinned to version ${req.pin} of ${ep.name}, which is no longer served: name a version, or ask for the pin to be moved`);
    }
    return pinned;
  }
  const chosen = VERSION_RE.test(raw) ? ep.versions.get(Number(raw)) : undefined;
  if (!chosen) throw refuse(ep, field, `Version ${raw.slice(0, 16)} of ${ep.name} is not served (unknown or retired)`);
  return chosen;
}

/** Deprecation and Sunset header values of a deprecated version; null for any other. */
export function deprecationHeaders(v: EndpointVersion): { Deprecation: string; Sunset: string } | null {
  if (v.state !== 'deprecated' || v.deprecatedAt === null || v.sunsetAt === null) return null;
  return { Deprecation: `@${Math.floor(v.deprecatedAt / 1000)}`, Sunset: new Date(v.sunsetAt).toUTCString() };
}

/** The line a deprecated version's answers carry in `messages`. */
export function deprecationMessage(ep: LoadedEndpoint, v: EndpointVersion): string | null {
  if (v.state !== 'deprecated' || v.sunsetAt === null) return null;
  return `version ${v.version} of ${ep.name} is deprecated and stops being served after ${new Date(v.sunsetAt).toISOString().slice(0, 10)}: move to version ${ep.current} (${VERSION_HEADER}: ${ep.current})`;
}
