// Live store versions as the documents that overlay the rule files: scope `default` is the
// defaults (scriptId null), any other scope an account's overrides; errors name a version
// `version 12 (default/ga4)` where a file would be named by its path.
import type { RuleVersion } from '../store/types.ts';
import type { OverlayDocument } from './load-rules.ts';

export const DEFAULT_SCOPE = 'default';

export const scopeOf = (scriptId: string | null): string => scriptId ?? DEFAULT_SCOPE;
export const scriptIdOf = (scope: string): string | null => (scope === DEFAULT_SCOPE ? null : scope);

/** How messages name a stored version. */
export const versionLabel = (v: Pick<RuleVersion, 'version' | 'scope' | 'destination'>): string =>
  `version ${v.version} (${v.scope}/${v.destination})`;

/** One stored version as an overlay document. */
export const versionDocument = (v: Pick<RuleVersion, 'version' | 'scope' | 'destination' | 'document'>): OverlayDocument => ({
  file: versionLabel(v), scriptId: scriptIdOf(v.scope), destination: v.destination, parsed: v.document, version: v.version,
});

/** The live versions as overlay documents. */
export const overlayOf = (live: readonly RuleVersion[]): OverlayDocument[] => live.map(versionDocument);
