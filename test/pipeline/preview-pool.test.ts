// Endpoint 2's preview planned on a pool thread: the same answer as on the calling thread,
// the rules sent to a thread once per list (and again when a rule set replaces them), and a
// failing pool answered by null (the caller plans on its own thread) instead of an error.
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { loadPlugins } from '../../src/destinations/load-plugins.ts';
import { previewEvent, type PreviewInput } from '../../src/pipeline/preview-event.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import { createRuleSet, type RuleSet } from '../../src/rules/rule-set.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { usePluginRules } from '../../src/rules/plugin-rules.ts';
import { createPreviewPool, type PreviewPool } from '../../src/pipeline/preview-pool.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';
import { startTestServer } from '../helpers/test-server.ts';

describe('workers: the preview pool', function () {
  this.timeout(30_000);
  const { pluginsDir, rulesDir } = shippedFolders();
  let pool: PreviewPool;
  let rules: RuleSet;
  let input: PreviewInput;

  before(async () => {
    usePluginRules(rulesDir, pluginsDir);
    const loaded = loadRules(rulesDir);
    if (!loaded.ok) throw new Error('rules failed to load');
    rules = loaded.ruleSet;
    const v = validateEvent(checkout('ORD-P1'), { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null });
    const now = Date.now();
    input = {
      account: { scriptId: 'PREV0001', country: 'RO', host: null },
      destinations: ['ga4', 'meta-capi', 'tiktok', 'webhook'].map((type, i) => ({
        id: `dst_000000000000000${i}`, scriptId: 'PREV0001', type, name: type, enabled: true, settings: SETTINGS[type]('https://dest.example'),
        createdAt: now, updatedAt: now,
      })),
      event: v.event as NormalizedEvent, eventId: 'ORD-P1', receivedAt: now, now,
    };
    pool = createPreviewPool({ pluginsDir, threads: 1 });
  });
  after(() => pool.close());

  it('plans what the calling thread plans, for every destination, secrets masked', async () => {
    const here = await previewEvent({ plugins: await loadPlugins(pluginsDir), rules: () => rules, pool: null }, input);
    const there = (await pool.plan(input, rules))!.preview;
    expect(there).to.deep.equal(here);
    expect(there.map((d) => d.status)).to.deep.equal(['would_send', 'would_send', 'would_send', 'would_send']);
    expect(JSON.stringify(there)).not.to.contain(SETTINGS.webhook('https://dest.example').secret as string);
  });

  it('sends a rule list to a thread once; a rule set that replaces it is sent again and used', async () => {
    const first = await pool.plan(input, rules);
    // A new rule set whose GA4 rules rename the event: new list objects, so new keys.
    const ga4 = rules.rulesFor('PREV0001', 'ga4').map((r) => ({ ...r, id: `${r.id}-renamed` }));
    const files = rules.destinations().map((type) => ({ file: type, destination: type, scriptId: null, rules: type === 'ga4' ? ga4 : rules.rulesFor('PREV0001', type), disabled: [] }));
    const changed = createRuleSet('', files);
    const second = (await pool.plan(input, changed))!.preview;
    const here = await previewEvent({ plugins: await loadPlugins(pluginsDir), rules: () => changed, pool: null }, input);
    expect(second).to.deep.equal(here);
    expect(first).to.deep.equal(await pool.plan(input, rules), 'the first set still answers as before');
    expect(first, 'without validate, no platform checks (no secret leaves the thread)').to.not.have.property('checks');
  });

  it('a task the pool cannot run answers null, so the caller plans on its own thread; the pool then rests, having said why once', async () => {
    const errors: unknown[] = [];
    const broken = createPreviewPool({ pluginsDir, threads: 1, onError: (err) => errors.push(err) });
    try {
      // A value no thread can receive (a function) fails the task itself.
      expect(await broken.plan({ ...input, now: (() => 1) as never }, rules)).to.equal(null);
      expect(await broken.plan(input, rules), 'resting: not tried again at once').to.equal(null);
      expect(errors).to.have.length(1);
    } finally {
      await broken.close();
    }
  });
  it('a task past its time limit is not planned again anywhere: every destination is answered as stopped, and the pool does not rest', async () => {
    const errors: unknown[] = [];
    const slow = createPreviewPool({ pluginsDir, threads: 1, timeoutMs: 1, onError: (err) => errors.push(err) });
    try {
      const planned = await slow.plan(input, rules);
      expect(planned, 'an answer, not null (null would plan it on the HTTP thread)').not.to.equal(null);
      const stopped = planned!.preview;
      expect(stopped.map((d) => [d.type, d.status, d.reason])).to.deep.equal(input.destinations.map((d) => [d.type, 'skipped', 'rule_budget_exceeded']));
      expect(stopped[0].message).to.equal('ga4: planning this event ran past its time limit of 0.001 s; nothing would be sent');
      expect(errors, 'not a pool failure: no rest').to.deep.equal([]);
    } finally {
      await slow.close();
    }
  });
});

describe('workers: PREVIEW_THREADS on a running server', function () {
  this.timeout(30_000);

  it('endpoint 2 answers the same with its previews planned on a pool thread as on the HTTP thread', async () => {
    const answers: unknown[] = [];
    for (const threads of ['0', '1']) {
      const s = await startTestServer({ PREVIEW_THREADS: threads, ALLOW_PRIVATE_DESTINATIONS: '1' });
      try {
        expect(s.config.previewThreads).to.equal(Number(threads));
        const shop = await s.account({ name: 'Preview shop', country: 'RO' });
        for (const type of ['ga4', 'meta-capi', 'webhook']) {
          await s.running.store.destinations.add({ id: `dst_${type.replace(/\W/g, '').padEnd(16, '0')}`, scriptId: shop.scriptId, type, name: type, enabled: true,
            settings: SETTINGS[type]('http://127.0.0.1:9') });
        }
        const res = await s.post('/webhooks/service/event/test', { ...checkout('ORD-PT1'), timestamp: '2026-11-27T07:00:00Z' }, { account: shop });
        expect(res.status).to.equal(200);
        expect(res.body.preview.map((d: { status: string }) => d.status), JSON.stringify(res.body.preview[0]).slice(0, 300)).to.deep.equal(['would_send', 'would_send', 'would_send']);
        // What differs between two servers (the account, the time the event was received and its requests built) aside.
        answers.push(JSON.parse(JSON.stringify(res.body.preview).replaceAll(shop.scriptId, 'SCRIPT')
          .replace(/"webhook-(id|timestamp|signature)":"[^"]*"/g, '"webhook-$1":"x"')
          .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'TIME').replace(/\d{10,}/g, '0')));
      } finally {
        await s.close();
      }
    }
    expect(answers[1]).to.deep.equal(answers[0]);
  });
});

describe('endpoint 2 without preview threads: costly events go to the overflow thread', function () {
  this.timeout(30_000);
  const { pluginsDir, rulesDir } = shippedFolders();

  it('plans a cheap event itself and hands one whose rules pass INLINE_PLAN_STEPS to the overflow planner, whose answer it gives', async () => {
    usePluginRules(rulesDir, pluginsDir);
    const loaded = loadRules(rulesDir);
    if (!loaded.ok) throw new Error('rules failed to load');
    const plugins = await loadPlugins(pluginsDir);
    const v = validateEvent(checkout('ORD-OV1'), { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null });
    const now = Date.now();
    const input: PreviewInput = {
      account: { scriptId: 'OVER0001', country: 'RO', host: null },
      destinations: [{ id: 'dst_0000000000000000', scriptId: 'OVER0001', type: 'webhook', name: 'webhook', enabled: true, settings: SETTINGS.webhook('https://dest.example'), createdAt: now, updatedAt: now }],
      event: v.event as NormalizedEvent, eventId: 'ORD-OV1', receivedAt: now, now,
    };
    const handed: PreviewInput[] = [];
    const overflow = () => ({ plan: async (i: PreviewInput) => (handed.push(i), { preview: [{ destination_id: 'x', type: 'webhook', name: 'w', status: 'would_send' as const, requests: [], warnings: ['from the overflow thread'] }] }) });
    const cheap = await previewEvent({ plugins, rules: () => loaded.ruleSet, pool: null, overflow }, input);
    expect(handed).to.have.length(0);
    expect(cheap[0].status).to.equal('would_send');
    // 1,000 comparisons per rule, ten rules: ~4,000 steps each, past the inline limit together.
    const costly = Array.from({ length: 10 }, (_, i) => ({ id: `costly.${i}`, event: '*', when: { some: [Array.from({ length: 1_000 }, (_, k) => k), { '==': [{ var: '' }, -1] }] }, output: { name: `c${i}` } }));
    const files = [{ file: 'webhook', destination: 'webhook', scriptId: null, rules: costly, disabled: [] }];
    const answer = await previewEvent({ plugins, rules: () => createRuleSet('', files as never), pool: null, overflow }, input);
    expect(handed).to.have.length(1);
    expect(answer[0].warnings).to.deep.equal(['from the overflow thread']);
    // With no overflow planner (the CLI, tests) the same rules are planned here, as before.
    const here = await previewEvent({ plugins, rules: () => createRuleSet('', files as never), pool: null }, input);
    expect(here[0].status).to.equal('skipped');
    expect(here[0].reason).to.equal('condition_not_met');
  });
});
