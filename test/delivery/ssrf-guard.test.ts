// The SSRF guard as a table: every encoding of an internal address is refused at save
// time, public destinations pass, and ALLOW_PRIVATE_DESTINATIONS opens only the ranges.
import { expect } from 'chai';
import { checkDestinationUrl, classifyAddress, isBlockedAddress } from '../../src/delivery/ssrf-guard.ts';

const strict = { allowPrivate: false };
const open = { allowPrivate: true };

describe('ssrf guard: checkDestinationUrl', () => {
  // [url, a fragment the reason must contain]
  const refused: Array<[string, string]> = [
    ['http://127.0.0.1/collect', 'loopback'],
    ['http://localhost:8080/', 'local or metadata name'],
    ['http://LOCALHOST./', 'local or metadata name'],
    ['http://api.localhost/', 'local or metadata name'],
    ['http://[::1]/', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'local or metadata name'],
    ['http://metadata/', 'local or metadata name'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://192.0.2.10/', 'documentation'],
    ['http://198.18.0.1/', 'benchmarking'],
    ['http://[fd00:ec2::254]/', 'unique local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[::]/', 'unspecified'],
    ['http://[2001:db8::1]/', 'documentation'],
    ['http://[::ffff:127.0.0.1]/', 'loopback embedded in IPv6'],
    ['http://[::ffff:7f00:1]/', 'loopback embedded in IPv6'],
    ['http://[::ffff:169.254.169.254]/', 'link-local / cloud metadata embedded'],
    ['http://[::127.0.0.1]/', 'IPv4-compatible'],
    ['http://[64:ff9b::7f00:1]/', 'loopback embedded in IPv6'],
    ['http://[64:ff9b::a00:1]/', 'private (RFC 1918) embedded in IPv6'],
    ['http://[2002:7f00:1::]/', 'loopback embedded in 6to4'],
    ['http://[2002:a9fe:a9fe::1]/', 'link-local / cloud metadata embedded in 6to4'],
    ['http://2130706433/', 'address 127.0.0.1 is loopback'],
    ['http://0x7f.1/', 'address 127.0.0.1 is loopback'],
    ['http://017700000001/', 'address 127.0.0.1 is loopback'],
    ['http://127.1/', 'address 127.0.0.1 is loopback'],
    ['http://0x7f000001/', 'address 127.0.0.1 is loopback'],
    ['http://127.0.0.%31/', 'address 127.0.0.1 is loopback'],
    ['http://0251.0376.0251.0376/', 'address 169.254.169.254'],
    ['file:///etc/passwd', 'scheme "file:"'],
    ['gopher://x', 'scheme "gopher:"'],
    ['ftp://x', 'scheme "ftp:"'],
    ['ws://example.com/', 'scheme "ws:"'],
    ['http://user@example.com', 'credentials'],
    ['http://user:pw@example.com', 'credentials'],
    ['http://:pw@example.com', 'credentials'],
    ['not a url', 'not a valid URL'],
    ['http://[fe80::1%25eth0]/', 'not a valid URL'],
  ];
  for (const [url, why] of refused) {
    it(`refuses ${url}`, () => {
      expect(checkDestinationUrl(url, strict)).to.be.a('string').that.contains(why);
    });
  }

  const accepted = [
    'https://www.google-analytics.com',
    'https://www.google-analytics.com/mp/collect?measurement_id=G-1',
    'https://93.184.216.34',
    'https://graph.facebook.com/v21.0/123/events',
    'http://example.com:8080/hook',
    'http://[2606:4700:4700::1111]/',
    'http://[::ffff:93.184.216.34]/',
    'http://[64:ff9b::5db8:d822]/',
    'http://[2002:5db8:d822::1]/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://localhost.example.com/',
  ];
  for (const url of accepted) {
    it(`accepts ${url}`, () => {
      expect(checkDestinationUrl(url, strict)).to.equal(null);
    });
  }

  it('allowPrivate accepts loopback, private names and encodings', () => {
    for (const url of ['http://127.0.0.1:3000/', 'http://localhost:3000/', 'http://[::1]:3000/', 'http://10.0.0.1/', 'http://2130706433/']) {
      expect(checkDestinationUrl(url, open), url).to.equal(null);
    }
  });

  it('allowPrivate still refuses other schemes and credentials', () => {
    expect(checkDestinationUrl('file:///etc/passwd', open)).to.contain('scheme');
    expect(checkDestinationUrl('http://user@127.0.0.1/', open)).to.contain('credentials');
  });
});

describe('ssrf guard: isBlockedAddress', () => {
  const blocked = [
    '127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '192.168.0.1', '100.64.0.1', '100.127.255.255',
    '169.254.169.254', '0.0.0.0', '0.1.2.3', '255.255.255.255', '224.0.0.251', '239.255.255.250', '240.0.0.1',
    '192.0.0.8', '192.0.2.1', '198.51.100.1', '203.0.113.1', '198.19.255.255', '192.88.99.1',
    '::', '::1', 'fe80::1', 'febf::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', 'ff0e::1',
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:0:a00:1', '::7f00:1', '::808:808',
    '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2002:c0a8:101::1',
    '2001::1', '2001:2::1', '2001:db8::1', '3fff::1', '100::1', '5f00::1', '[::1]',
    'not-an-ip', '',
  ];
  for (const ip of blocked) {
    it(`blocks ${JSON.stringify(ip)}`, () => expect(isBlockedAddress(ip)).to.equal(true));
  }

  const allowed = ['8.8.8.8', '93.184.216.34', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.253.255.255',
    '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
  for (const ip of allowed) {
    it(`allows ${ip}`, () => expect(isBlockedAddress(ip)).to.equal(false));
  }

  it('names the range so operators see why', () => {
    expect(classifyAddress('169.254.169.254')).to.equal('link-local / cloud metadata');
    expect(classifyAddress('fd00:ec2::254')).to.equal('unique local (fc00::/7)');
    expect(classifyAddress('8.8.8.8')).to.equal(null);
  });
});
