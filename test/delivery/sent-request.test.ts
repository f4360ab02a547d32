// What an attempt keeps of its request: secrets masked wherever they are (credential and
// signature headers whole, a secret setting's value in the URL or body), the digest and size
// of the body as sent, the body text up to 16 KiB.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { SENT_BODY_BYTES, sentRequest } from '../../src/delivery/sent-request.ts';

const plugin = { secretSettings: ['api_secret', 'token'], secretHeaders: ['X-Signature'] };
const settings = { api_secret: 's3cr/et+key', token: 'tok-123456', measurement_id: 'G-1' };

describe('sentRequest: what an attempt keeps', () => {
  it('masks secrets in headers, URL (plain or encoded) and body; digest and size are of the body sent', () => {
    const body = JSON.stringify({ token: 'tok-123456', email: 'a@b.example' });
    const r = sentRequest({
      method: 'POST', url: `https://x.example/collect?api_secret=${encodeURIComponent('s3cr/et+key')}&id=G-1`,
      headers: { 'x-signature': 'abc', authorization: 'Bearer tok-123456', 'x-custom': 'key tok-123456', 'content-type': 'application/json' },
      body, eventIds: ['e1'],
    }, plugin, settings);
    expect(r.url).to.equal('https://x.example/collect?api_secret=****&id=G-1');
    expect(r.headers).to.deep.equal({ 'x-signature': '****', authorization: '****', 'x-custom': 'key ****', 'content-type': 'application/json' });
    expect(JSON.parse(r.body!)).to.deep.equal({ token: '****', email: 'a@b.example' });
    expect(r).to.include({ method: 'POST', bodyBytes: Buffer.byteLength(body), bodySha256: createHash('sha256').update(body).digest('hex'), bodyTruncated: false });
    expect(JSON.stringify(r)).not.to.contain('tok-123456').and.not.to.contain('s3cr');
  });

  it('keeps at most 16 KiB of a larger body, marked truncated', () => {
    const body = JSON.stringify({ data: 'x'.repeat(SENT_BODY_BYTES * 2) });
    const r = sentRequest({ method: 'POST', url: 'https://x.example/', headers: {}, body, eventIds: [] }, plugin, settings);
    expect(Buffer.byteLength(r.body!)).to.equal(SENT_BODY_BYTES);
    expect(r).to.include({ bodyBytes: Buffer.byteLength(body), bodyTruncated: true });
  });

  it('an attempt that succeeded keeps the body\'s size and digest, not its text', () => {
    const body = JSON.stringify({ email: 'a@b.example' });
    const r = sentRequest({ method: 'POST', url: 'https://x.example/', headers: {}, body, eventIds: [] }, plugin, settings, false);
    expect(r).to.include({ body: null, bodyBytes: Buffer.byteLength(body), bodySha256: createHash('sha256').update(body).digest('hex'), bodyTruncated: false });
  });
});
