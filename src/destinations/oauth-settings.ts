// The OAuth 2.0 settings a destination that declares `oauth` accepts instead of a fixed
// `access_token` (docs/api.md, "Destinations"): written once here, so every such plugin takes
// the same keys, the same secrets and the same "one or the other" rule, and the delivery
// core (src/delivery/oauth/) reads them the same way for every platform.

/** What a plugin declares to use OAuth: the platform's token endpoint. */
export interface OAuthSpec {
  /** Where the refresh token is exchanged, unless the destination sets `token_url`. */
  tokenUrl: string;
}

/**
 * Spread into a plugin's `settingsSchema.properties` beside `access_token` (which is then
 * optional: the loader requires one form or the other, see `oauthSettingsProblems`).
 */
export const OAUTH_SETTINGS_PROPERTIES = {
  client_id: { type: 'string', minLength: 1, description: 'OAuth client id of the app the refresh token was issued to' },
  client_secret: { type: 'string', minLength: 1, description: 'OAuth client secret (secret)' },
  refresh_token: { type: 'string', minLength: 1, description: 'OAuth refresh token; exchanged for access tokens as they expire (secret)' },
  token_url: { type: 'string', format: 'uri', pattern: '^https?://', description: "token endpoint replacing the platform's (a test double)" },
} as const;

/**
 * Spread at the top of such a schema: `access_token`, or all three OAuth keys. The loader
 * words a config that meets neither with `oauthSettingsProblems` instead of ajv's anyOf errors.
 */
export const ACCESS_TOKEN_OR_OAUTH = {
  // Each branch names its keys' properties (any value: the schema's own properties check them) for ajv's strictRequired.
  anyOf: [
    { required: ['access_token'], properties: { access_token: {} } },
    { required: ['client_id', 'client_secret', 'refresh_token'], properties: { client_id: {}, client_secret: {}, refresh_token: {} } },
  ],
} as const;

/** Settings keys of the OAuth form that are secrets, masked wherever config is shown. */
export const OAUTH_SECRET_SETTINGS = ['client_secret', 'refresh_token'] as const;

const OAUTH_KEYS = ['client_id', 'client_secret', 'refresh_token'] as const;

/** The credentials a token request needs. */
export interface OAuthCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

const given = (settings: Readonly<Record<string, unknown>>, key: string) => typeof settings[key] === 'string' && settings[key] !== '';

/**
 * The destination's OAuth credentials, or null when it uses a fixed `access_token` (or its
 * plugin does not do OAuth). With both forms set, OAuth wins: the access token is not used.
 */
export function oauthCredentials(spec: OAuthSpec | undefined, settings: Readonly<Record<string, unknown>>): OAuthCredentials | null {
  if (spec === undefined || !OAUTH_KEYS.every((k) => given(settings, k))) return null;
  return {
    tokenUrl: given(settings, 'token_url') ? (settings.token_url as string) : spec.tokenUrl,
    clientId: settings.client_id as string,
    clientSecret: settings.client_secret as string,
    refreshToken: settings.refresh_token as string,
  };
}

/**
 * Save-time check of a plugin with `oauth`, after its schema: `access_token`, or all of
 * client_id, client_secret and refresh_token; a half-given OAuth form names what is missing.
 */
export function oauthSettingsProblems(settings: Readonly<Record<string, unknown>>): string[] {
  const missing = OAUTH_KEYS.filter((k) => !given(settings, k));
  if (missing.length === 0) return [];
  if (missing.length < OAUTH_KEYS.length) {
    return [`config: OAuth needs client_id, client_secret and refresh_token together (missing ${missing.join(', ')})`];
  }
  if (given(settings, 'access_token')) return [];
  return ['config: give access_token, or client_id, client_secret and refresh_token (OAuth: the service refreshes the access token itself)'];
}
