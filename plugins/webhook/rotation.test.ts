// Secret rotation: both signatures are sent until the old secret's window ends, and each
// verifies with an independent HMAC computed here.
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import plugin from './index.ts';
import { normalizedEvent } from 'tracklane/sdk/testing';

const NEW = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const sign = (secret: string, id: string, ts: string, body: string) =>
  'v1,' + createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${ts}.${body}`).digest('base64');

describe('webhook secret rotation', () => {
  const until = Date.parse('2026-01-02T00:00:00Z');
  const settings = { url: 'https://h.example/in', secret: NEW, previous_secret: OLD, previous_secret_expires_at: new Date(until).toISOString() };
  const item = { native: { ruleId: 'webhook.all', fields: { type: 'lead_created' } }, eventId: 'L-1', messageId: 'msg_00000000000000000000000000000001', event: normalizedEvent({ event: { name: 'lead_created', id: 'L-1', exchange_rate: 1 }, context: { environment: 'prod', data_source: 'crm' } }), identifiers: {}, attribution: {}, receivedAt: until - 60_000 };

  it('sends both signatures inside the window, each verifying', () => {
    const [req] = plugin.buildRequests({ settings, items: [item], now: until - 1000 });
    const ts = req.headers['webhook-timestamp'];
    expect(req.headers['webhook-signature']).to.equal(`${sign(NEW, 'msg_00000000000000000000000000000001', ts, req.body)} ${sign(OLD, 'msg_00000000000000000000000000000001', ts, req.body)}`);
  });

  it('sends only the new signature once the window has passed', () => {
    const [req] = plugin.buildRequests({ settings, items: [item], now: until });
    expect(req.headers['webhook-signature']).to.equal(sign(NEW, 'msg_00000000000000000000000000000001', req.headers['webhook-timestamp'], req.body));
  });

  it('requires an expiry with a previous secret and treats it as a secret', () => {
    expect(plugin.secretSettings).to.include('previous_secret');
    expect((plugin.settingsSchema as any).dependencies.previous_secret).to.deep.equal(['previous_secret_expires_at']);
  });
});
