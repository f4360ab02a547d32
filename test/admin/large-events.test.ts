// One tenant's large events (thousands of per-product warnings, hundreds of products) cost
// the admin API no more than their count: event lists carry warning and error counts, not
// the issues (those come with one event's detail), and a replay through a draft loads and
// plans the stored events a page at a time, never all of them in one task.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { adminCall, TOKEN } from './admin-client.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import type { EventRecord } from '../../src/domain/records.ts';
import type { Issue } from '../../src/schema/types.ts';
import { REPLAY_PAGE, replayThroughDraft } from '../../src/admin/rules-draft-runs.ts';
import { runDraftTask, type DraftRequest, type DraftRunner } from '../../src/pipeline/draft-preview.ts';
import { DRAFT_TIME_LIMIT_MS } from '../../src/admin/draft-pool.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const WARNINGS = 3_000;
const warning = (i: number): Issue => ({ field: `products[${i}].category`, code: 'INVALID_VALUE', message: `products[${i}].category is not one of the categories this account maps; sent as is` });

describe('admin API: large events', function () {
  this.timeout(60_000);
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  it('lists events with warning and error counts (a page stays small); one event\'s detail has its issues in full', async () => {
    const { scriptId } = await s.account();
    const rows: EventRecord[] = range(40).map((i) => ({
      id: `evt-large-${i}-${randomBytes(4).toString('hex')}`, scriptId, name: 'lead_created', eventId: `L-${i}`, status: i === 0 ? 'rejected' : 'accepted',
      source: 'event', requestId: `req-${i}`, receivedAt: Date.now(), payload: { event: { name: 'lead_created', id: `L-${i}` } },
      errors: i === 0 ? [{ field: 'event.currency', code: 'INVALID_FORMAT', message: 'not ISO 4217' }] : [], warnings: range(WARNINGS).map(warning),
    }));
    await s.running.store.events.append(rows);
    const r = await fetch(`${s.url}/admin/events?script_id=${scriptId}&limit=500`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await r.text();
    // 40 events with 3,000 warnings each are ~13 MB of issues; the page counts them.
    expect(text.length, 'bytes of the page').to.be.below(20_000);
    const { items } = JSON.parse(text);
    expect(items).to.have.length(40);
    for (const item of items) {
      expect(item).not.to.have.any.keys('warnings', 'errors', 'payload');
      expect(item.warning_count).to.equal(WARNINGS);
    }
    const rejected = items.find((it: any) => it.status === 'rejected');
    expect(rejected).to.include({ error_count: 1, first_error_code: 'INVALID_FORMAT', event_id: 'L-0' });
    expect(items.find((it: any) => it.status === 'accepted')).to.include({ error_count: 0, first_error_code: null });
    const found = (await adminCall(s.url, 'GET', '/admin/trace?q=L-1')).body.items;
    expect(found[0]).to.include({ warning_count: WARNINGS }).and.not.to.have.any.keys('warnings');
    const detail = (await adminCall(s.url, 'GET', `/admin/events/${rejected.id}`)).body;
    expect(detail.event.warnings).to.have.length(WARNINGS);
    expect(detail.event.errors).to.deep.equal(rows[0].errors);
  });

  it('a replay through a draft over many large events plans them a page at a time', async () => {
    const shop = await s.account();
    await s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook('https://hook.example/in') });
    const products = range(200).map((i) => ({ id: `SKU-${i}`, name: `Item ${i}`, price_base: 1, price: 1, quantity: 1, category: 'Kitchen', tax_included: true, tax_percent: 19 }));
    expect((await s.post(INTAKE_PATHS.event, checkout('ORD-BIG-0', { products, event: { name: 'checkout_completed', id: 'ORD-BIG-0', value: 200, currency: 'EUR' } }), { account: shop })).status).to.equal(200);
    const [stored] = await s.running.store.events.list({ scriptId: shop.scriptId, limit: 1 });
    const EVENTS = 3 * REPLAY_PAGE + 7;
    // Copies of the stored event (each its own event id), as if the tenant had sent them all.
    await s.running.store.events.append(range(EVENTS - 1).map((i) => ({ ...stored, id: `evt-big-${i}-${randomBytes(4).toString('hex')}`, eventId: `ORD-BIG-${i + 1}` })));

    const tasks: number[] = [];
    const loads: number[] = [];
    const drafts: DraftRunner = {
      timeLimitMs: DRAFT_TIME_LIMIT_MS,
      run: (request: DraftRequest) => {
        tasks.push(request.subjects.length);
        return runDraftTask({ ...request, timeLimitMs: DRAFT_TIME_LIMIT_MS }, s.running.plugins);
      },
      async close() {},
    };
    const store = { ...s.running.store, events: { ...s.running.store.events, list: (f: Parameters<typeof s.running.store.events.list>[0]) => (loads.push(f.limit ?? Infinity), s.running.store.events.list(f)) } };
    const rules = s.running.rules.current();
    const r = await replayThroughDraft({ store, drafts, live: () => rules }, 'webhook', rules, { scriptId: shop.scriptId, last: 500 });
    expect(r).to.include({ considered: EVENTS, events: EVENTS, events_changed: 0, requests_before: EVENTS, requests_after: EVENTS });
    expect(Math.max(...tasks), 'events per task').to.equal(REPLAY_PAGE);
    expect(tasks.reduce((a, b) => a + b, 0)).to.equal(EVENTS);
    expect(Math.max(...loads), 'events per load').to.be.at.most(REPLAY_PAGE);
  });
});
