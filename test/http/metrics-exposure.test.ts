// /metrics without METRICS_TOKEN names accounts' script ids to whoever reaches the port: the
// server warns at start when it listens beyond loopback without the token, judged on the
// address it is bound to (every spelling of "all interfaces" and of loopback).
import { expect } from 'chai';
import { isLoopbackAddress, metricsExposureWarning } from '../../src/http/metrics-exposure.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { captureLogger } from '../helpers/log-capture.ts';

const TOKEN = 'metrics-token-0123456789';
const warnings = (lines: Record<string, any>[]) => lines.filter((l) => l.level === 40 && /METRICS_TOKEN/.test(String(l.msg)));

describe('metrics exposure warning', () => {
  it('counts only loopback addresses as private, in every spelling a socket reports', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).to.equal(true);
    for (const a of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', '::ffff:10.0.0.5', '::ffff:0.0.0.0', 'fe80::1', '', 'localhost', '127.0.0.1 ']) {
      expect(isLoopbackAddress(a), a).to.equal(false);
    }
    expect(metricsExposureWarning('0.0.0.0', null)).to.match(/METRICS_TOKEN/);
    expect(metricsExposureWarning('0.0.0.0', TOKEN)).to.equal(null);
    expect(metricsExposureWarning('::1', null)).to.equal(null);
  });

  for (const { host, token, warns } of [
    { host: '0.0.0.0', token: null, warns: true },
    { host: '0.0.0.0', token: TOKEN, warns: false },
    { host: 'localhost', token: null, warns: false },
  ]) {
    it(`HOST=${host}${token ? ' with' : ' without'} METRICS_TOKEN: ${warns ? 'warns' : 'no warning'} at start`, async () => {
      const log = captureLogger('info');
      const s = await startTestServer({ HOST: host, ...(token ? { METRICS_TOKEN: token } : {}) }, { logger: log.logger });
      try {
        expect(warnings(log.lines), JSON.stringify(log.lines.map((l) => l.msg))).to.have.length(warns ? 1 : 0);
      } finally {
        await s.close();
      }
    });
  }
});
