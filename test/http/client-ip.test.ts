// TRUST_PROXY and the client address: X-Forwarded-For is believed only as far as configured.
import { expect } from 'chai';
import { clientIp, parseTrustProxy, UNKNOWN_CLIENT } from '../../src/client-ip.ts';
import { loadConfig } from '../../src/config.ts';

describe('http: client address (TRUST_PROXY)', () => {
  const off = parseTrustProxy(undefined);
  const one = parseTrustProxy('1');
  const two = parseTrustProxy('2');
  const cidrs = parseTrustProxy('10.0.0.0/8, 127.0.0.1, fd00::/8');

  it('off (unset, empty, 0, false): X-Forwarded-For changes nothing', () => {
    for (const t of [off, parseTrustProxy(''), parseTrustProxy('0'), parseTrustProxy('false')]) {
      expect(clientIp('198.51.100.7', '10.1.2.3', t)).to.equal('198.51.100.7');
    }
    expect(clientIp('::ffff:198.51.100.7', undefined, off), 'IPv4-mapped socket address as IPv4').to.equal('198.51.100.7');
  });

  it('a hop count: the address that many hops left of the socket; the right-most entry for 1', () => {
    expect(clientIp('10.0.0.2', '10.1.2.3, 203.0.113.9', one)).to.equal('203.0.113.9');
    expect(clientIp('10.0.0.2', '10.1.2.3, 203.0.113.9', two)).to.equal('10.1.2.3');
    expect(clientIp('10.0.0.2', '203.0.113.9', two), 'a shorter chain: its left-most').to.equal('203.0.113.9');
    expect(clientIp('10.0.0.2', undefined, one), 'no header: the socket').to.equal('10.0.0.2');
    expect(clientIp('10.0.0.2', ' 203.0.113.9:4711 ', one), 'a port is dropped').to.equal('203.0.113.9');
    expect(clientIp('10.0.0.2', '[2001:db8::1]:443', one)).to.equal('2001:db8::1');
  });

  it('a CIDR list: walks left past trusted proxies; the first untrusted address is the client', () => {
    expect(clientIp('127.0.0.1', '203.0.113.9, 10.9.9.9', cidrs)).to.equal('203.0.113.9');
    expect(clientIp('127.0.0.1', '10.1.2.3, 198.51.100.4, 10.9.9.9', cidrs), 'stops at the first untrusted').to.equal('198.51.100.4');
    expect(clientIp('198.51.100.50', '10.1.2.3', cidrs), 'a socket that is not a trusted proxy is the client').to.equal('198.51.100.50');
    expect(clientIp('127.0.0.1', '10.1.2.3', cidrs), 'all trusted: the left-most').to.equal('10.1.2.3');
  });

  it('garbage where an address is needed makes the client unknown, never the proxy or an entry past it', () => {
    expect(clientIp('10.0.0.2', '10.1.2.3, not-an-ip', one)).to.equal(UNKNOWN_CLIENT);
    expect(clientIp('127.0.0.1', '10.1.2.3, 0xCB007109', cidrs)).to.equal(UNKNOWN_CLIENT);
    expect(clientIp('10.0.0.2', 'not-an-ip, 203.0.113.9', one), 'garbage beyond the trusted hops is never read').to.equal('203.0.113.9');
  });

  it('a bad TRUST_PROXY stops start-up naming the variable', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).to.throw(/TRUST_PROXY: "yes" is not an IP address or CIDR/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).to.throw(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: '99' })).to.throw(/hop count up to 32/);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).to.deep.equal({ kind: 'hops', hops: 1 });
  });
});
