// A published rule reads the user however it likes (`user.email`, the whole `user`, the
// whole data with `{"var": ""}`, copies under other keys), yet what the rules of a webhook
// that has not opted in to plaintext see is hashed, and never plaintext when marketing
// consent is refused: checked on what a loopback receiver gets and on endpoint 2's preview.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRules, formatRuleError } from '../../src/rules/load-rules.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { startTestApp, tempDir, waitFor } from '../helpers/test-app.ts';
import { checkout, useFixtureWithDouble } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const USER = {
  id: 'CUST-PLAIN-77', email: 'Jane.Plain@Example.com', phone: '+40 722 123 456', first_name: 'Janeplain', last_name: 'Doeplain',
  street: 'Strada Plainstreet 12', city: 'Plaincity', region: 'Plainregion', postal_code: '400917', country: 'RO',
};
/** Plaintext that must not appear anywhere in a body the rules of a not opted-in webhook built. */
const NEVER = ['jane.plain@example.com', '722123456', '722 123 456', 'janeplain', 'doeplain', 'plainstreet', '400917'];
/** What the webhook itself sends in plain text under data.user by design (its customer id, city, region); rules see them hashed too. */
const PLAIN_BY_DESIGN = ['cust-plain-77', 'plaincity', 'plainregion'];
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** webhook.event of one account, rewritten to read the user every way a rule can. */
const LEAKY_RULES = {
  destination: 'webhook',
  rules: [{
    id: 'webhook.event',
    event: '*',
    output: {
      type: { var: 'event.name' },
      'data.user': { var: 'user' },
      'data.raw_email': { var: 'user.email' },
      'data.copy': { var: 'user' },
      'data.custom.phone': { var: 'user.phone' },
      'data.custom.name': { cat: [{ var: 'user.first_name' }, ' ', { var: 'user.last_name' }] },
      'data.everything': { var: '' },
    },
  }],
};

const MARKETING_REFUSED = { analytics: true, personalization: true, marketing: false };

/** What the rules of a destination wrote: everything but data.user, which the plugin fills itself. */
function ruleWritten(body: { data: Record<string, unknown> }): string {
  const { user: _placedByPlugin, ...rest } = body.data;
  return JSON.stringify(rest).toLowerCase();
}

function expectNoPlaintext(body: { data: Record<string, unknown> }, what: string): void {
  const text = JSON.stringify(body).toLowerCase();
  for (const s of NEVER) expect(text, `${what}: ${s} in the body`).to.not.include(s);
  const written = ruleWritten(body);
  for (const s of [...NEVER, ...PLAIN_BY_DESIGN]) expect(written, `${what}: ${s} in what the rules wrote`).to.not.include(s);
}

describe('rules see identifiers hashed unless the destination opted in and marketing consent is given', function () {
  this.timeout(20_000);

  describe('delivery to a webhook receiver', () => {
    const t = useFixtureWithDouble();
    let plain: DestinationDouble;
    let scriptId: string;

    beforeEach(async () => {
      plain = await startDestinationDouble();
      scriptId = await t.f.account();
    });
    afterEach(() => plain.close());

    /** The shipped rules with the account's published webhook version over them. */
    function publishedRules() {
      const loaded = loadRules(shippedFolders().rulesDir, {
        overlay: [{ file: `version 1 (${scriptId}/webhook)`, version: 1, scriptId, destination: 'webhook', parsed: LEAKY_RULES }],
      });
      if (!loaded.ok) throw new Error(loaded.errors.map(formatRuleError).join('\n'));
      return loaded.ruleSet;
    }

    it('a webhook that has not opted in never receives what its rules read in clear; an opted-in one does, with consent only', async () => {
      const { f, dbl: hashed } = t;
      await f.destination(scriptId, 'webhook', hashed.url);
      await f.destination(scriptId, 'webhook', plain.url, { send_plaintext_identifiers: true });
      await f.ingest(scriptId, checkout('ORD-GRANTED', { user: USER }));
      await f.ingest(scriptId, checkout('ORD-REFUSED', { user: USER, consent: MARKETING_REFUSED }));
      const ruleSet = publishedRules();
      await f.dispatcher({ rules: { current: () => ruleSet } }).runOnce();
      await hashed.waitFor(() => hashed.requests.length === 2, 5_000, 'two events at the hashed webhook');
      await plain.waitFor(() => plain.requests.length === 2, 5_000, 'two events at the opted-in webhook');

      const byId = (d: DestinationDouble) => Object.fromEntries(d.requests.map((r) => [r.json().id, r.json()]));
      const toHashed = byId(hashed);
      const toPlain = byId(plain);
      expectNoPlaintext(toHashed['ORD-GRANTED'], 'not opted in, consent given');
      expectNoPlaintext(toHashed['ORD-REFUSED'], 'not opted in, consent refused');
      expectNoPlaintext(toPlain['ORD-REFUSED'], 'opted in, consent refused');

      // What the rules read instead: each identifier hashed in its normal form.
      expect(toHashed['ORD-GRANTED'].data.raw_email).to.equal(sha256('jane.plain@example.com'));
      expect(toHashed['ORD-GRANTED'].data.custom.phone).to.equal(sha256('+40722123456'));
      expect(toHashed['ORD-GRANTED'].data.copy).to.include({ id: sha256('CUST-PLAIN-77'), first_name: sha256('janeplain') });
      expect(toHashed['ORD-GRANTED'].data.everything.user).to.deep.equal(toHashed['ORD-GRANTED'].data.copy);
      expect(toPlain['ORD-REFUSED'].data.raw_email).to.equal(sha256('jane.plain@example.com'));

      // Opted in and consent given: as sent, as before.
      const granted = toPlain['ORD-GRANTED'];
      expect(granted.data.raw_email).to.equal(USER.email);
      expect(granted.data.custom.phone).to.equal(USER.phone);
      expect(granted.data.copy).to.deep.equal(USER);
      expect(granted.data.user).to.deep.equal(USER);
    });
  });

  describe('endpoint 2 preview', () => {
    it('shows the rules of a not opted-in webhook, and of one whose event refused marketing consent, only hashes', async () => {
      const rulesDir = tempDir('tl-rules-');
      cpSync(shippedFolders().rulesDir, rulesDir, { recursive: true });
      const s = await startTestApp({ RULES_DIR: rulesDir }, { watchRules: true });
      try {
        const a = await s.account({ country: 'RO', host: 'https://shop.example' });
        const svc = createDestinationService(s.running.store, s.running.plugins);
        const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
        const hashedId = (await svc.add(a.scriptId, 'webhook', { url: 'https://hashed.example/hook', secret })).id;
        const plainId = (await svc.add(a.scriptId, 'webhook', { url: 'https://plain.example/hook', secret, send_plaintext_identifiers: true })).id;
        mkdirSync(join(rulesDir, 'accounts', a.scriptId), { recursive: true });
        writeFileSync(join(rulesDir, 'accounts', a.scriptId, 'webhook.json'), JSON.stringify(LEAKY_RULES));

        const preview = async (consent?: typeof MARKETING_REFUSED) => {
          const r = await s.post(INTAKE_PATHS.test, checkout('ORD-PREVIEW', consent ? { user: USER, consent } : { user: USER }), { account: a });
          expect(r.status, r.text).to.equal(200);
          const bodyOf = (id: string) => r.body.preview.find((p: { destination_id: string }) => p.destination_id === id)?.requests[0]?.body;
          return { hashed: bodyOf(hashedId), plain: bodyOf(plainId) };
        };
        expect(await waitFor(async () => (await preview()).hashed?.data?.raw_email !== undefined, 5_000), 'the account rule file is picked up').to.equal(true);

        const granted = await preview();
        expectNoPlaintext(granted.hashed, 'preview, not opted in');
        expect(granted.hashed.data.raw_email).to.equal(sha256('jane.plain@example.com'));
        expect(granted.plain.data.raw_email, 'opted in, consent given: as sent').to.equal(USER.email);

        const refused = await preview(MARKETING_REFUSED);
        expectNoPlaintext(refused.hashed, 'preview, not opted in, consent refused');
        expectNoPlaintext(refused.plain, 'preview, opted in, consent refused');
      } finally {
        await s.close();
      }
    });
  });
});
