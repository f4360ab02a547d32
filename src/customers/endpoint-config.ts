// endpoint.json: an endpoint's extra authentication, rate limits and handler settings.
// Its schema is checked at load, so a typo stops start instead of opening an endpoint.
import type { ErrorObject } from 'ajv';
import { compileDraft07Schema } from '../schema/ajv-draft07.ts';

/** An API key in a header, compared with stored SHA-256 hashes in constant time. */
export interface ApiKeyAuthConfig {
  type: 'api_key';
  /** Default `X-Api-Key`. */
  header?: string;
  /** SHA-256 (hex) of each accepted key; several allow rotation. The keys themselves are never written down. */
  key_sha256?: string[];
  /** Or: an environment variable holding the key. */
  key_env?: string;
}

/** A JWT, by default in `Authorization: Bearer …`; iss, aud, exp (required) and nbf are checked. */
export interface JwtAuthConfig {
  type: 'jwt';
  algorithm: 'HS256' | 'RS256';
  issuer: string;
  audience: string;
  /** Default `Authorization` (Bearer scheme); any other header carries the bare token. */
  header?: string;
  /** HS256: the shared secret inline (demos and tests), or the variable holding it. */
  secret?: string;
  secret_env?: string;
  /** RS256: the PEM public key (SPKI) inline, or the variable holding it. */
  public_key?: string;
  public_key_env?: string;
  /** Default 30. */
  clock_tolerance_seconds?: number;
  /** Refuse tokens issued (iat) longer ago than this. */
  max_age_seconds?: number;
}

/** HMAC-SHA256 over `<timestamp>.<raw body>`; the timestamp must be within the replay window. */
export interface HmacAuthConfig {
  type: 'hmac';
  /** Default `X-Signature`; hex digest, optionally prefixed `sha256=`. */
  header?: string;
  /** Default `X-Signature-Timestamp`; Unix seconds. */
  timestamp_header?: string;
  secret?: string;
  secret_env?: string;
  /** Replay window: how far the timestamp may be from now, either way. Default 300. */
  tolerance_seconds?: number;
}

/** Only clients whose address (the client address, see TRUST_PROXY) is inside one of these IPv4/IPv6 CIDRs. */
export interface IpAllowAuthConfig {
  type: 'ip_allow';
  cidrs: string[];
}

export type AuthConfig = ApiKeyAuthConfig | JwtAuthConfig | HmacAuthConfig | IpAllowAuthConfig;

export interface RateLimitConfig {
  per_minute: number;
  /** Requests allowed at once (bucket size); defaults to per_minute. */
  burst?: number;
}

export interface EndpointConfig {
  description: string;
  /** Every listed mechanism must pass, on top of script id and access token. */
  auth?: AuthConfig[];
  rate_limit?: { production?: RateLimitConfig; test?: RateLimitConfig };
  /** Free-form values the handler reads as ctx.settings. */
  settings?: Record<string, unknown>;
  /** The version a request gets when it names none and its account has no pin (default 1). */
  current_version?: number;
  /** Every version besides the current one, by number: still served, or deprecated until its sunset. */
  versions?: Record<string, VersionStateConfig>;
}

/** An older version: `active`, or `deprecated` with the dates its Deprecation and Sunset headers carry. */
export interface VersionStateConfig {
  state: 'active' | 'deprecated';
  /** `2026-05-01` or an ISO 8601 date-time with a zone. */
  deprecated_at?: string;
  sunset?: string;
}

const HEADER = { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' };
const ENV_NAME = { type: 'string', pattern: '^[A-Z_][A-Z0-9_]{0,127}$' };
const RATE = {
  type: 'object',
  required: ['per_minute'],
  additionalProperties: false,
  properties: {
    per_minute: { type: 'integer', minimum: 1, maximum: 10_000_000 },
    burst: { type: 'integer', minimum: 1, maximum: 10_000_000 },
  },
};

export const endpointConfigSchema = {
  type: 'object',
  required: ['description'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    description: { type: 'string', minLength: 1, maxLength: 500 },
    auth: {
      type: 'array',
      maxItems: 4,
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: { enum: ['api_key', 'jwt', 'hmac', 'ip_allow'] } },
        discriminator: { propertyName: 'type' },
        oneOf: [
          {
            properties: {
              type: { const: 'api_key' },
              header: HEADER,
              key_sha256: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
              key_env: ENV_NAME,
            },
            additionalProperties: false,
          },
          {
            required: ['algorithm', 'issuer', 'audience'],
            properties: {
              type: { const: 'jwt' },
              algorithm: { enum: ['HS256', 'RS256'] },
              issuer: { type: 'string', minLength: 1 },
              audience: { type: 'string', minLength: 1 },
              header: HEADER,
              secret: { type: 'string', minLength: 32 },
              secret_env: ENV_NAME,
              public_key: { type: 'string', minLength: 1 },
              public_key_env: ENV_NAME,
              clock_tolerance_seconds: { type: 'integer', minimum: 0, maximum: 300 },
              max_age_seconds: { type: 'integer', minimum: 1 },
            },
            additionalProperties: false,
          },
          {
            properties: {
              type: { const: 'hmac' },
              header: HEADER,
              timestamp_header: HEADER,
              secret: { type: 'string', minLength: 32 },
              secret_env: ENV_NAME,
              tolerance_seconds: { type: 'integer', minimum: 1, maximum: 3600 },
            },
            additionalProperties: false,
          },
          {
            required: ['cidrs'],
            properties: {
              type: { const: 'ip_allow' },
              cidrs: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            },
            additionalProperties: false,
          },
        ],
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      properties: { production: RATE, test: RATE },
    },
    settings: { type: 'object' },
    current_version: { type: 'integer', minimum: 1, maximum: 9999 },
    versions: {
      type: 'object',
      propertyNames: { pattern: '^[1-9][0-9]{0,3}$' },
      additionalProperties: {
        type: 'object',
        required: ['state'],
        additionalProperties: false,
        properties: {
          state: { enum: ['active', 'deprecated'] },
          deprecated_at: { type: 'string' },
          sunset: { type: 'string' },
        },
      },
    },
  },
} as const;

const validate = compileDraft07Schema<EndpointConfig>(endpointConfigSchema);

function describe(e: ErrorObject): string {
  const where = e.instancePath === '' ? '' : `${e.instancePath.slice(1).replaceAll('/', '.')}: `;
  if (e.keyword === 'additionalProperties') return `${where}unknown key "${(e.params as { additionalProperty: string }).additionalProperty}"`;
  if (e.keyword === 'discriminator') return `${where}type must be one of api_key, jwt, hmac, ip_allow`;
  if (e.keyword === 'enum') return `${where}must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return `${where}${e.message}`;
}

/** The problems of an endpoint.json document (empty when it is valid), beyond what the schema says too. */
export function checkEndpointConfig(doc: unknown): string[] {
  if (!validate(doc)) return (validate.errors ?? []).map(describe);
  const problems: string[] = [];
  const seen = new Set<string>();
  (doc.auth ?? []).forEach((a, i) => {
    const at = `auth.${i}: `;
    if (seen.has(a.type)) problems.push(`${at}${a.type} is listed twice`);
    seen.add(a.type);
    if (a.type === 'api_key' && (a.key_sha256 === undefined) === (a.key_env === undefined)) {
      problems.push(`${at}give exactly one of key_sha256 and key_env`);
    }
    if (a.type === 'hmac' && (a.secret === undefined) === (a.secret_env === undefined)) {
      problems.push(`${at}give exactly one of secret and secret_env`);
    }
    if (a.type === 'jwt') {
      const [one, other] = a.algorithm === 'HS256' ? ['secret', 'secret_env'] : ['public_key', 'public_key_env'];
      const wrong = a.algorithm === 'HS256' ? ['public_key', 'public_key_env'] : ['secret', 'secret_env'];
      const rec = a as unknown as Record<string, unknown>;
      if ((rec[one] === undefined) === (rec[other] === undefined)) problems.push(`${at}${a.algorithm} needs exactly one of ${one} and ${other}`);
      for (const k of wrong) if (rec[k] !== undefined) problems.push(`${at}${k} does not apply to ${a.algorithm}`);
    }
  });
  problems.push(...versionStateProblems(doc.versions ?? {}));
  for (const env of ['production', 'test'] as const) {
    const r = doc.rate_limit?.[env];
    if (r?.burst !== undefined && r.burst > r.per_minute * 60) problems.push(`rate_limit.${env}.burst is larger than an hour of requests`);
  }
  return problems;
}

/** Milliseconds of an endpoint.json date (`2026-09-30` is midnight UTC), or NaN. */
export const parseVersionDate = (s: string): number =>
  /^\d{4}-\d{2}-\d{2}$/.test(s) ? Date.parse(`${s}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:\d{2})$/i.test(s) ? Date.parse(s) : NaN;

/** A deprecated version needs both dates (its headers carry them), the sunset after the deprecation; an active one neither. */
function versionStateProblems(versions: Record<string, VersionStateConfig>): string[] {
  const problems: string[] = [];
  for (const [v, s] of Object.entries(versions)) {
    const at = `versions.${v}`;
    if (s.state === 'active') {
      if (s.deprecated_at !== undefined || s.sunset !== undefined) problems.push(`${at}: an active version has no deprecated_at or sunset (set state to deprecated)`);
      continue;
    }
    const dates = (['deprecated_at', 'sunset'] as const).map((k) => {
      const raw = s[k];
      if (raw === undefined) problems.push(`${at}: a deprecated version needs ${k}, a date such as 2026-09-30`);
      else if (Number.isNaN(parseVersionDate(raw))) problems.push(`${at}.${k}: "${raw}" is not a date such as 2026-09-30 or an ISO 8601 date-time with a zone`);
      return raw === undefined ? NaN : parseVersionDate(raw);
    });
    if (dates[1] <= dates[0]) problems.push(`${at}: sunset must come after deprecated_at`);
  }
  return problems;
}

export const isEndpointConfig = (doc: unknown): doc is EndpointConfig => checkEndpointConfig(doc).length === 0;
