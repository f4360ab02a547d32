// SQLite deliveries, the upkeep that keeps work from being stranded: pending deliveries of
// a removed destination are canceled (recorded as `skipped`, reason `destination_removed`),
// those of a destination that stayed disabled or paused past the retention period expire
// (`skipped`, reason `expired`), and `retryNow` makes waiting retries due at once. A
// delivery under an unexpired lease is left to its holder; a later sweep takes it.
import type Database from 'better-sqlite3';
import type { DeliveryStore } from '../delivery-contract.ts';

type Maintenance = Pick<DeliveryStore, 'retryNow' | 'expireStranded'>;

import { EXPIRED_MESSAGE, REMOVED_MESSAGE } from '../delivery-contract.ts';


/** The UPDATE that cancels the free pending deliveries of one removed destination (used by the destination store's remove). */
export function cancelRemovedSql(): string {
  return `UPDATE deliveries SET status = 'skipped', skip_reason = 'destination_removed', last_error = '${REMOVED_MESSAGE}',
    next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = @now
    WHERE destination_id = @id AND status = 'pending' AND (lease_until IS NULL OR lease_until <= @now)`;
}

export function sqliteDeliveryMaintenance(db: Database.Database): Maintenance {
  const removed = db.prepare(`UPDATE deliveries SET status = 'skipped', skip_reason = 'destination_removed',
      last_error = '${REMOVED_MESSAGE}', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = @now
    WHERE status = 'pending' AND (lease_until IS NULL OR lease_until <= @now)
      AND destination_id IN (SELECT id FROM destinations WHERE removed_at IS NOT NULL)`);
  const inactive = db.prepare(`UPDATE deliveries SET status = 'skipped', skip_reason = 'expired',
      last_error = '${EXPIRED_MESSAGE}', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = @now
    WHERE status = 'pending' AND created_at < @before AND (lease_until IS NULL OR lease_until <= @now)
      AND destination_id IN (SELECT d.id FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
        WHERE d.removed_at IS NULL AND (d.enabled = 0 OR h.paused_at IS NOT NULL))`);
  const sweep = db.transaction((now: number, before: number) => ({
    removed: removed.run({ now }).changes,
    expired: inactive.run({ now, before }).changes,
  }));

  return {
    async expireStranded(now, before) {
      return sweep.immediate(now, before);
    },

    async retryNow(f, now) {
      const where = ["status = 'pending'", 'next_attempt_at > @now', 'lease_owner IS NULL'];
      if (f.scriptId !== undefined) where.push('script_id = @scriptId');
      if (f.destinationId !== undefined) where.push('destination_id = @destinationId');
      const stmt = db.prepare(`UPDATE deliveries SET next_attempt_at = @now, updated_at = @now WHERE ${where.join(' AND ')}`);
      return db.transaction(() => stmt.run({ now, scriptId: f.scriptId, destinationId: f.destinationId }).changes).immediate();
    },
  };
}
