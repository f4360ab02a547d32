// Runs one custom endpoint folder end to end: a real server (test-server.ts) loading the
// folder's customer alone (another customer's unfinished folder beside it changes nothing),
// and an account on the CUSTOM plan bound to the folder's customer. Endpoint tests
// (customers/**/*.test.ts) and scaffolded tests use it, from `tracklane/sdk/testing`; it
// re-exports chai's expect.
import { realpathSync, rmSync, symlinkSync } from 'node:fs';
export { expect } from 'chai';
import { basename, dirname, join, resolve } from 'node:path';
import type { CreateAccountInput } from '../../accounts/account-service.ts';
import { startTestServer, tempDir, type PostOptions, type TestAccount, type TestResponse, type TestServer } from './test-server.ts';

export interface CustomPostOptions extends Omit<PostOptions, 'query'> {
  /** `production` (the default when absent), `test`, or anything to provoke a refusal. */
  env?: string;
  /** Raw query string instead of ?id=…&env=…. */
  query?: string;
}

export interface EndpointHarness {
  server: TestServer;
  /** CUSTOM plan, bound to the endpoint's customer. */
  account: TestAccount;
  customer: string;
  endpoint: string;
  path: string;
  /** The current version's example.json, as loaded. */
  example: any;
  post(body: unknown, opts?: CustomPostOptions): Promise<TestResponse>;
  /** Posts version `version`'s own example.json to that version (X-Service-Endpoint-Version); default: the current version. */
  postExample(version?: number, opts?: CustomPostOptions): Promise<TestResponse>;
  /** Another account: `{ tier: 'PRO' }`, `{ customer: null }` (unbound), approved events… */
  makeAccount(input?: Partial<CreateAccountInput> & { customer?: string | null; approveEvents?: string[] }): Promise<TestAccount>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Extra environment for loadConfig (the server's own process.env is what endpoint.json *_env reads). */
  env?: Record<string, string>;
  /** Event names to approve for the bound account (beyond the nine spec names). */
  approveEvents?: string[];
}

/** `endpointDir` is customers/<slug>/endpoints/<name>; CUSTOMERS_DIR holds its customer folder, linked, and nothing else. */
export async function startEndpointHarness(endpointDir: string, opts: HarnessOptions = {}): Promise<EndpointHarness> {
  const dir = resolve(endpointDir);
  const endpoint = basename(dir);
  const customerDir = dirname(dirname(dir));
  const customer = basename(customerDir);
  const customersDir = tempDir('tl-endpoint-');
  symlinkSync(customerDir, join(customersDir, customer), 'dir');
  const server = await startTestServer({ CUSTOMERS_DIR: customersDir, ...opts.env });
  const path = `/service/custom/${endpoint}`;

  async function makeAccount(input: Partial<CreateAccountInput> & { customer?: string | null; approveEvents?: string[] } = {}): Promise<TestAccount> {
    const { customer: bind = customer, approveEvents = opts.approveEvents, ...create } = input;
    const a = await server.account({ name: `${customer} test`, tier: 'CUSTOM', addon: false, ...create });
    await server.accounts.update(a.scriptId, { customer: bind, approveEvents });
    return a;
  }

  const account = await makeAccount();
  const loaded = server.running.customers.get(customer)?.get(endpoint);
  const problem = loaded === undefined
    ? `${dir} did not load (a broken endpoint folder is skipped: run \`npx tracklane customers list\` with CUSTOMERS_DIR naming its customers folder to see why)`
    : realpathSync(loaded.folder) !== realpathSync(dir)
      ? `the customer "${customer}" is also ${dirname(dirname(loaded.folder))}, which is served instead: give this customer folder another name`
      : null;
  if (problem !== null) {
    await server.close();
    rmSync(customersDir, { recursive: true, force: true });
    throw new Error(problem);
  }
  const served = loaded!;
  const post = (body: unknown, o: CustomPostOptions = {}) => {
    const a = o.account ?? account;
    const query = o.query ?? `id=${a.scriptId}${o.env === undefined ? '' : `&env=${encodeURIComponent(o.env)}`}`;
    return server.post(path, body, { ...o, account: a, query });
  };
  return {
    server,
    account,
    customer,
    endpoint,
    path,
    example: served.example,
    makeAccount,
    post,
    postExample(version = served.current, o = {}) {
      const v = served.versions.get(version);
      if (v === undefined) throw new Error(`${customer}/${endpoint} has no version ${version} (versions: ${[...served.versions.keys()].join(', ')})`);
      return post(v.example, { ...o, headers: { 'x-service-endpoint-version': String(version), ...o.headers } });
    },
    async close() {
      await server.close();
      rmSync(customersDir, { recursive: true, force: true });
    },
  };
}
