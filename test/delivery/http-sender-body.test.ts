// The HTTP sender's per-request costs kept down without changing what is sent: the body goes
// out as the UTF-8 bytes it was encoded to once (net/body-bytes.ts, the attempt's digest taken
// from the same bytes), and a caller's signal carries one listener however many attempts it
// covers.
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import { createHash } from 'node:crypto';
import { createHttpSender, type HttpSender } from '../../src/delivery/http-sender.ts';
import { sentRequest } from '../../src/delivery/sent-request.ts';
import type { OutboundRequest } from '../../src/destinations/types.ts';
import { startDouble, until, type DestinationDouble } from './helpers/destination-double.ts';

const post = (url: string, body: string): OutboundRequest => ({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body, eventIds: ['e1'] });

describe('http sender: the body as bytes, one abort listener', function () {
  this.timeout(10_000);
  let sender: HttpSender;
  let double: DestinationDouble | undefined;
  beforeEach(() => {
    sender = createHttpSender({ allowPrivate: true, totalTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    await sender.close();
    await double?.close();
    double = undefined;
  });

  it('sends the body as UTF-8, byte for byte, and the attempt records the size and digest of those bytes', async () => {
    double = await startDouble((_req, res) => res.end('ok'));
    const req = post(double.url(), '{"name":"Zoë ✓ 😀"}');
    const r = await sender.send(req);
    expect(r.kind).to.equal('response');
    const received = Buffer.from(double.hits[0].body, 'utf8');
    expect(double.hits[0].body).to.equal(req.body);
    expect(double.hits[0].headers['content-length']).to.equal(String(received.length));
    expect(sentRequest(req, { secretSettings: [] }, {}, false)).to.include({
      bodyBytes: received.length, bodySha256: createHash('sha256').update(received).digest('hex'),
    });
  });

  it("puts one listener on the caller's signal however many attempts are in flight, and its abort ends them all", async () => {
    double = await startDouble(() => {});
    const ac = new AbortController();
    const pending = [0, 1, 2].map((i) => sender.send(post(double!.url(`/n/${i}`), '{}'), ac.signal));
    await until(() => double!.hits.length === 3, 3_000, 'the requests to arrive');
    expect(getEventListeners(ac.signal, 'abort')).to.have.length(1);
    ac.abort();
    for (const r of await Promise.all(pending)) expect(r).to.include({ kind: 'error', errorClass: 'other', message: 'request aborted' });
  });
});
