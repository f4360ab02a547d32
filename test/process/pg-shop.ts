// What the PostgreSQL process tests share: an account with one webhook destination on a
// double, stored straight into the test database, and endpoint 1 posts of a lead event.
import { randomBytes } from 'node:crypto';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

export interface PgShop {
  scriptId: string;
  token: string;
  /** POSTs a lead_created event with this id to endpoint 1 of the server at `baseUrl`. */
  send(baseUrl: string, id: string): Promise<Response>;
}

export async function seedPgShop(databaseUrl: string, hookUrl: string, name: string): Promise<PgShop> {
  const setup = await openPostgresStore({ url: databaseUrl });
  try {
    const { account, accessToken } = await createAccountService(setup).create({ name, tier: 'FLEX', addon: true });
    await setup.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: account.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hookUrl) });
    return {
      scriptId: account.scriptId,
      token: accessToken,
      send: (baseUrl, id) => fetch(`${baseUrl}/webhooks/service/event?id=${account.scriptId}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
        body: JSON.stringify({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/' } }),
      }),
    };
  } finally {
    await setup.close();
  }
}
