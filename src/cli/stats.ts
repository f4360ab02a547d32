// `tracklane stats`: per destination, deliveries by status, the oldest pending delivery's
// age, how long due work has waited (lagging past a minute: src/delivery/lagging.ts) and
// whether the destination is paused; plus the events still awaiting fan-out.
import { createAccountService } from '../accounts/account-service.ts';
import { isLagging, overdueMs } from '../delivery/lagging.ts';
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { UsageError, formatTable, iso } from './output.ts';
import { usageFor } from './usage.ts';

export async function runStats(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['stats'];
  if (args[0] !== undefined && !args[0].startsWith('-')) throw new UsageError(`unknown command "stats ${args[0]}"`, cmd);
  const { values, positionals: pos } = parseCommand(args, { account: { type: 'string' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const store = await ctx.store();
  if (values.account !== undefined) await createAccountService(store).get(values.account);
  const now = Date.now();
  const stats = await store.deliveries.stats(values.account);
  const destinations = stats.map((s) => ({
    destination_id: s.destinationId,
    script_id: s.scriptId,
    type: s.type,
    name: s.name,
    enabled: s.enabled,
    removed: s.removed,
    paused: s.health?.pausedAt != null,
    paused_at: iso(s.health?.pausedAt ?? null),
    pause_reason: s.health?.pauseReason ?? null,
    failing_since: iso(s.health?.failingSince ?? null),
    last_success_at: iso(s.health?.lastSuccessAt ?? null),
    counts: s.counts,
    oldest_pending_at: iso(s.oldestPendingAt),
    oldest_pending_age_seconds: s.oldestPendingAt === null ? null : Math.max(0, Math.round((now - s.oldestPendingAt) / 1000)),
    overdue_seconds: Math.round(overdueMs(s.nextDueAt, now) / 1000),
    lagging: !s.removed && isLagging({ enabled: s.enabled, paused: s.health?.pausedAt != null, nextDueAt: s.nextDueAt }, now),
  }));
  const out = {
    generated_at: iso(now),
    dispatch_backlog: await store.deliveries.dispatchBacklog(),
    paused_destinations: destinations.filter((d) => d.paused).map((d) => d.destination_id),
    lagging_destinations: destinations.filter((d) => d.lagging).map((d) => d.destination_id),
    destinations,
  };
  ctx.output(values.json ?? false).result(out, () => {
    const list = (ids: string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
    const head = `Events awaiting fan-out: ${out.dispatch_backlog}. Paused destinations: ${list(out.paused_destinations)}. `
      + `Lagging destinations (work overdue more than a minute): ${list(out.lagging_destinations)}.`;
    if (destinations.length === 0) return `${head}\nNo destinations.`;
    const table = formatTable(
      ['DESTINATION', 'ACCOUNT', 'TYPE', 'STATE', 'PENDING', 'DELIVERED', 'FAILED', 'DEAD', 'SKIPPED', 'OLDEST_PENDING_S', 'OVERDUE_S'],
      destinations.map((d) => [d.destination_id, d.script_id, d.type,
        d.removed ? 'removed' : d.paused ? (d.pause_reason === 'reauthorize' ? 'PAUSED (reauthorize)' : 'PAUSED') : d.lagging ? 'LAGGING' : d.enabled ? 'enabled' : 'disabled',
        d.counts.pending, d.counts.delivered, d.counts.failed, d.counts.dead, d.counts.skipped, d.oldest_pending_age_seconds, d.overdue_seconds]));
    return `${head}\n\n${table}`;
  });
}
