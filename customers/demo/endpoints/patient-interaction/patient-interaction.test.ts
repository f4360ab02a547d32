// demo/patient-interaction over real HTTP: only SHA-256 digests of identifiers leave the
// handler — in the preview of what destinations would get, and in the SQLite file itself —
// and the free-text notes are nowhere. Plus the IP allow-list, the JWT and the refusals.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { startEndpointHarness, type EndpointHarness, type TestAccount } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const SECRET = new TextEncoder().encode('demo-only-hs256-secret-patient-interaction-7c1e');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Every plaintext of example.json that must never be stored or sent. */
const PLAINTEXT = [
  'recurring migraines', 'Follow-up in 6 weeks', 'Maria', 'Ionescu', 'maria.ionescu', 'Maria.Ionescu@Example.com',
  '+40744111222', '40744111222', '744111222', 'PAT-558213', '1987-03-14', 'INT-2024-000187',
];

function token(opts: { aud?: string; exp?: number } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'clinic-crm' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://crm.demo-clinic.example')
    .setAudience(opts.aud ?? 'tracklane:demo:patient-interaction')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? now + 300)
    .sign(SECRET);
}

describe('demo/patient-interaction', () => {
  let h: EndpointHarness;
  let viewer: TestAccount;
  let auth: Record<string, string>;

  before(async () => {
    // As deployed behind a reverse proxy on loopback: the client is the address it adds.
    h = await startEndpointHarness(DIR, { env: { TRUST_PROXY: '127.0.0.1' } });
    viewer = await h.makeAccount({ country: 'RO' });
    // Only ever used with env=test: shows what Meta would receive, and nothing is queued.
    await h.server.addDestination(viewer.scriptId, 'meta-capi', { pixel_id: '111222333', access_token: 'meta-demo-token' });
    auth = { authorization: `Bearer ${await token()}` };
  });
  after(() => h.close());

  const example = () => structuredClone(h.example);

  it('env=test: example.json → lead_closed with hashed ids, and what Meta would receive holds digests only', async () => {
    const r = await h.post(h.example, { env: 'test', headers: auth, account: viewer });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.deep.equal([
      'interaction INT-2024-000187: lead_closed; identifiers hashed, notes dropped',
      'test mode: nothing was stored or delivered',
    ]);
    const d = r.body.custom_data;
    // No page URL from a CRM: the account host stands in, with a URL_FALLBACK warning.
    expect(d).to.include({ records_processed: 1, validation_status: 'valid_with_warnings', env: 'test' });
    const [ev] = d.events;
    expect(ev.status).to.equal('would_accept');
    expect(ev.payload).to.deep.equal({
      event: { name: 'lead_closed', id: sha256(`${viewer.scriptId}:interaction:INT-2024-000187`), value: 250, currency: 'RON' },
      context: { environment: 'prod', data_source: 'crm' },
      user: { id: sha256(`${viewer.scriptId}:patient:PAT-558213`), email: sha256('maria.ionescu@example.com') },
      consent: { analytics: true, personalization: false, marketing: true },
    });
    const [meta] = ev.preview;
    expect(meta).to.include({ type: 'meta-capi', status: 'would_send' });
    expect(meta.requests[0].body.data[0].user_data.em).to.deep.equal(sha256('maria.ionescu@example.com'));
    const outside = JSON.stringify(d.events);
    for (const p of PLAINTEXT) expect(outside, p).to.not.include(p);
  });

  it('env=production: stored with digests only; the notes and every plaintext identifier are absent from the SQLite file', async () => {
    const r = await h.post(h.example, { headers: auth });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.custom_data.events).to.deep.equal([
      { name: 'lead_closed', event_id: sha256(`${h.account.scriptId}:interaction:INT-2024-000187`), status: 'accepted' },
    ]);
    expect(r.body.custom_data.records_stored).to.equal(0);
    await h.server.running.writer.drain();
    const file = h.server.databaseFile;
    const bytes = [file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('\n');
    for (const p of PLAINTEXT) expect(bytes, p).to.not.include(p);
    // The payload is stored deflated, so it is checked as the store reads it back. Positive
    // control: the stored event holds the digest.
    const [stored] = await h.server.running.store.events.list({ scriptId: h.account.scriptId });
    const payload = JSON.stringify(stored.payload);
    expect(payload).to.include(sha256('maria.ionescu@example.com'));
    for (const p of PLAINTEXT) expect(payload, p).to.not.include(p);
    expect(payload).to.not.match(/notes|first_name|last_name|phone|date_of_birth/);
  });

  it('maps inquiry → lead_created and appointment_booked → lead_qualified, without a value', async () => {
    for (const [type, name] of [['inquiry', 'lead_created'], ['appointment_booked', 'lead_qualified']]) {
      const r = await h.post({ ...example(), type }, { env: 'test', headers: auth });
      expect(r.status).to.equal(200);
      expect(r.body.custom_data.events[0].payload.event).to.deep.equal({ name, id: sha256(`${h.account.scriptId}:interaction:INT-2024-000187`) });
    }
  });

  it('IP allow-list: refuses an address outside it (IPv4 and IPv6), accepts one inside an IPv6 range', async () => {
    for (const ip of ['203.0.113.50', '2001:db8:b22::1']) {
      const r = await h.post(h.example, { env: 'test', headers: { ...auth, 'x-forwarded-for': ip } });
      expect(r.status, ip).to.equal(403);
      expect(r.body.error_code).to.equal('ACCESS_NOT_ENABLED');
    }
    const ok = await h.post(h.example, { env: 'test', headers: { ...auth, 'x-forwarded-for': '2001:db8:a11:5::9' } });
    expect(ok.status).to.equal(200);
  });

  it('JWT: refuses a missing, expired or wrong-audience token', async () => {
    const missing = await h.post(h.example, { env: 'test' });
    expect(missing.status).to.equal(401);
    expect(missing.body.error_code).to.equal('AUTH_MISSING');
    const expired = await h.post(h.example, { env: 'test', headers: { authorization: `Bearer ${await token({ exp: Math.floor(Date.now() / 1000) - 120 })}` } });
    expect(expired.body.messages).to.deep.equal(['JWT refused: the token has expired']);
    const aud = await h.post(h.example, { env: 'test', headers: { authorization: `Bearer ${await token({ aud: 'tracklane:demo:order-sync' })}` } });
    expect(aud.status).to.equal(401);
    expect(aud.body.messages).to.deep.equal(['JWT refused: the token\'s "aud" claim is not the one this endpoint expects']);
  });

  const invalid: [string, (b: any) => void, string, string][] = [
    ['no interaction_id', (b) => delete b.interaction_id, 'interaction_id',
      'an interaction id of 1 to 64 letters, digits, dots, dashes or underscores, such as INT-2024-000187'],
    ['an unknown type', (b) => { b.type = 'surgery'; }, 'type', 'one of "inquiry", "appointment_booked", "consultation_completed"'],
    ['occurred_at without a zone', (b) => { b.occurred_at = '2024-05-02T14:05:00'; }, 'occurred_at', 'an ISO 8601 date-time with a time zone, such as 2024-05-01T13:45:00Z'],
    ['a patient without patient_id', (b) => delete b.patient.patient_id, 'patient.patient_id', 'a string of 1 to 64 characters'],
    ['an invalid e-mail', (b) => { b.patient.email = 'maria at example'; }, 'patient.email', 'an e-mail address such as name@example.com'],
    ['a fee without currency', (b) => delete b.currency, 'currency', 'a three-letter ISO 4217 currency code in capitals, such as EUR'],
    ['consent as words', (b) => { b.consent.marketing = 'yes'; }, 'consent.marketing', 'true or false'],
    ['no consent', (b) => delete b.consent, 'consent', 'an object with analytics, personalization, marketing'],
    ['notes over 4000 characters', (b) => { b.notes = 'x'.repeat(4001); }, 'notes', 'a string of at most 4000 characters'],
    ['a field the schema does not know', (b) => { b.diagnosis = 'G43'; }, 'diagnosis',
      'no such field; the allowed fields here are interaction_id, type, occurred_at, channel, patient, fee, currency, consent, notes'],
  ];
  for (const [what, change, field, expected] of invalid) {
    it(`400 for ${what}: error_context names ${field}`, async () => {
      const body = example();
      change(body);
      const r = await h.post(body, { env: 'test', headers: auth });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
      expect(r.body.error_context).to.deep.equal({ field, expected_format: expected });
      // Refusals never echo what was sent.
      expect(r.text).to.not.include('Maria');
      expect(r.text).to.not.include('migraines');
    });
  }
});
