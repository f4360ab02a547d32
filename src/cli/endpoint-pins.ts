// `accounts update --pin-endpoint ENDPOINT=VERSION` / `--unpin-endpoint ENDPOINT`: the flags
// read, and each pin checked against the folder the account is bound to, so a pin always
// names a version the endpoint serves at the time it is set.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeServed, readEndpointPlan } from '../customers/endpoint-versions.ts';
import { customerFolder, type CustomerFolders } from '../customers/load-customers.ts';
import { endpointNameProblem, pinMap } from '../accounts/endpoint-pins.ts';
import { CliError, UsageError } from './output.ts';

/**
 * Endpoint name → version to pin, or null to unpin; undefined when neither flag was given.
 * The map has no prototype and every name is an endpoint's: `__proto__=1` on a plain object
 * would set nothing and report success.
 */
export function parsePins(pin: string[] | undefined, unpin: string[] | undefined, cmd: string[]): Record<string, number | null> | undefined {
  if (!pin?.length && !unpin?.length) return undefined;
  const pins = pinMap<number | null>({});
  const named = (flag: string, name: string): string => {
    const problem = endpointNameProblem(name);
    if (problem !== null) throw new UsageError(`${flag}: ${problem}`, cmd);
    return name;
  };
  for (const p of pin ?? []) {
    const m = /^([^=]+)=([1-9][0-9]{0,3})$/.exec(p);
    if (!m) throw new UsageError(`--pin-endpoint takes ENDPOINT=VERSION, such as order-sync=2, got "${p}"`, cmd);
    pins[named('--pin-endpoint', m[1])] = Number(m[2]);
  }
  for (const e of unpin ?? []) pins[named('--unpin-endpoint', e)] = null;
  return pins;
}

/** Refuses a pin to an endpoint or version the account's customer folder does not serve. */
export function checkPins(customersDirs: CustomerFolders, customer: string | null, pins: Record<string, number | null>): void {
  for (const [endpoint, version] of Object.entries(pins)) {
    if (version === null) continue;
    if (customer === null) throw new CliError(`cannot pin ${endpoint}: the account is bound to no customer folder (--customer SLUG)`);
    const customerDir = customerFolder(customersDirs, customer);
    if (customerDir === undefined) throw new CliError(`cannot pin ${endpoint}: no customer folder "${customer}" in ${[customersDirs].flat().join(', ')}`);
    const folder = join(customerDir, 'endpoints', endpoint);
    if (!existsSync(folder)) throw new CliError(`cannot pin ${endpoint}: ${folder} does not exist`);
    const plan = readEndpointPlan(folder);
    if (typeof plan === 'string') throw new CliError(`cannot pin ${endpoint}: ${folder}: ${plan}`);
    if (!plan.versions.some((v) => v.version === version)) {
      throw new CliError(`cannot pin ${endpoint}=${version}: ${customer}/${endpoint} serves versions ${describeServed(plan.versions)}`);
    }
  }
}
