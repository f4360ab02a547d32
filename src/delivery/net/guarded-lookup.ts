// A net.connect `lookup` that resolves a hostname and refuses it when any answer is a
// blocked address. The addresses it hands back are the only ones the socket may dial, so
// the address checked is the address connected to (DNS-rebinding safe).
import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from '../ssrf-guard.ts';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a hostname to every address it has; the default is the OS resolver. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export const BLOCKED_ADDRESS_CODE = 'ERR_TRACKLANE_BLOCKED_ADDRESS';

/** Raised by the lookup when a destination resolves to a blocked address. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = BLOCKED_ADDRESS_CODE;
  /** The range the address fell in (e.g. `loopback`); never the address itself. */
  readonly range: string;
  constructor(range: string) {
    super(`destination resolves to a blocked address (${range})`);
    this.range = range;
  }
}

function noAddress(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND', hostname });
}

/**
 * Refusing the whole name when any one answer is blocked (rather than dialling the
 * others) keeps split-horizon and rebinding answers from ever half-working.
 */
export function createGuardedLookup(resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return function guardedLookup(hostname, options, callback) {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    resolve(hostname).then(
      (answers) => {
        const addresses = answers.filter((a) => wanted === 0 || a.family === wanted);
        if (addresses.length === 0) return callback(noAddress(hostname), '', 0);
        if (!allowPrivate) {
          for (const a of addresses) {
            const range = classifyAddress(a.address);
            if (range !== null) return callback(new BlockedAddressError(range), '', 0);
          }
        }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
