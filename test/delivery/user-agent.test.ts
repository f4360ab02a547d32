// Every outbound request names its sender: one event through the dispatcher to a destination
// of every shipped plugin (webhook included), all on one loopback double, and each request
// arrives with `User-Agent: tracklane/<version of package.json>`, whatever a plugin's headers say.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpSender } from '../../src/delivery/http-sender.ts';
import { shippedPluginNames } from '../helpers/shipped-plugins.ts';
import { checkout, ROOT, SETTINGS, useFixtureWithDouble } from './delivery-fixture.ts';
import { startDouble } from './helpers/destination-double.ts';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('delivery: User-Agent on every outbound request', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('a request of each shipped plugin reaches the double with User-Agent tracklane/<version>', async () => {
    const scriptId = await t.f.account();
    const names = shippedPluginNames();
    expect(Object.keys(SETTINGS), 'every shipped plugin has its example settings').to.include.members(names);
    // Each destination's base URL ends in its type, so the double tells the requests apart.
    for (const type of names) await t.f.destination(scriptId, type, `${t.dbl.url}/${type}`);
    // Click ids of every platform that needs one to send a conversion.
    const url = 'https://shop.example.com/thanks?gclid=Cj0KCQ-test&li_fat_id=li-1&rdt_cid=318474&msclkid=ms-1&ScCid=sc-1&epik=ep-1&ttclid=tt-1&fbclid=fb-1';
    await t.f.ingest(scriptId, checkout('ORD-UA-1', { context: { environment: 'prod', data_source: 'website', url, user_agent: 'Mozilla/5.0 test', overide_ip: '203.0.113.9' } }));
    await t.f.dispatcher().runOnce();

    const types = new Set(t.dbl.requests.map((r) => r.path.split('/')[1]));
    expect([...types].sort(), 'one request per plugin at least').to.deep.equal([...names].sort());
    for (const r of t.dbl.requests) expect(r.headers['user-agent'], r.path).to.equal(`tracklane/${VERSION}`);
  });

  it('replaces a User-Agent a request brings in any spelling, and adds none twice', async () => {
    const d = await startDouble((_req, res) => res.end('ok'));
    const sender = createHttpSender({ allowPrivate: true });
    try {
      await sender.send({ method: 'POST', url: d.url('/x'), headers: { 'content-type': 'application/json', 'USER-Agent': 'curl/8' }, body: '{}', eventIds: ['e1'] });
      expect(d.hits).to.have.length(1);
      expect(d.hits[0].headers['user-agent']).to.equal(`tracklane/${VERSION}`);
    } finally {
      await sender.close();
      await d.close();
    }
  });
});
