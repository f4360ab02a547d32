// Events a platform can never match (no identifier it accepts) are kept out of its batches:
// sent, they are at best wasted and at worst refuse the whole request they ride in. The
// plugin says what "matchable" means (its optional `unmatchable` hook).
import type { DestinationPlugin, OutgoingItem } from '../destinations/types.ts';

/** The plugin's reason when every native event of the event is unmatchable; else null. */
export function unmatchableReason(plugin: DestinationPlugin, settings: Record<string, unknown>, items: readonly OutgoingItem[]): string | null {
  if (plugin.unmatchable === undefined || items.length === 0) return null;
  let reason: string | null = null;
  for (const item of items) {
    const why = plugin.unmatchable(item, settings);
    if (why === null) return null;
    reason ??= why;
  }
  return reason;
}
