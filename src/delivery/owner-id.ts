// Process owner ids for leases: `host/pid/random`. Claim ids are `${owner}#…`, so a stale
// process can never complete work that a newer claim holds. On start, leases of owners that
// ran on this host and whose pid is gone are released at once instead of waiting out the lease.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newOwnerId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}

export { ownerOf } from '../store/claim-owner.ts';

/**
 * True only when the owner certainly died: it ran on this host under a pid that no longer
 * exists. Anything else (another host, a live pid, an unreadable id) waits for lease expiry.
 */
export function isDeadLocalOwner(owner: string): boolean {
  const [host, pidText] = owner.split('/');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
