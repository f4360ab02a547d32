import { expect } from 'chai';
import { loadConfig, ConfigError, SHIPPED_FOLDERS } from '../src/config.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c).to.include({ port: 8080, host: '0.0.0.0', dataDir: '/srv/app/data', databaseUrl: null, maxBodyBytes: 524288, logLevel: 'info' });
    expect(c.rulesDir).to.equal('/srv/app/rules');
    // The shipped plugins and custom endpoints: the package's own folders, wherever it runs from.
    expect(c.pluginsDirs).to.deep.equal([SHIPPED_FOLDERS.plugins]);
    expect(c.customersDirs).to.deep.equal([SHIPPED_FOLDERS.customers]);
    expect(c).to.include({ newPluginsDir: SHIPPED_FOLDERS.plugins, newCustomersDir: SHIPPED_FOLDERS.customers });
    expect(c.allowPrivateDestinations).to.equal(false);
    expect(c.publicBaseUrl).to.equal('http://localhost:8080');
    expect(c.workers).to.be.greaterThan(0);
    expect(c.intakeMaxPending).to.equal(20_000);
    expect(loadConfig({ INTAKE_MAX_PENDING: '64' }).intakeMaxPending).to.equal(64);
    expect(c.idleTick, 'TRACKLANE_IDLE_TICK unset: the slowed tick\'s defaults').to.deep.equal({});
  });

  it('reads TRACKLANE_IDLE_TICK (tests only): the delivery thread\'s slowed tick', () => {
    expect(loadConfig({ TRACKLANE_IDLE_TICK: '{"idleTickMs":60000,"idleAfterTicks":2}' }).idleTick).to.deep.equal({ idleTickMs: 60_000, idleAfterTicks: 2 });
    expect(loadConfig({ TRACKLANE_IDLE_TICK: '{"heardPollMs":600000}' }).idleTick).to.deep.equal({ heardPollMs: 600_000 });
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /^PORT must be a whole number/],
    [{ PORT: '70000' }, /^PORT must be between/],
    [{ MAX_BODY_BYTES: '-1' }, /^MAX_BODY_BYTES/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL/],
    [{ ALLOW_PRIVATE_DESTINATIONS: 'yes' }, /^ALLOW_PRIVATE_DESTINATIONS/],
    [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN/],
    [{ WORKERS: '0' }, /^WORKERS/],
    [{ INTAKE_MAX_PENDING: '0' }, /^INTAKE_MAX_PENDING/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /^PUBLIC_BASE_URL/],
    [{ TRACKLANE_IDLE_TICK: 'set-by-the-operator' }, /^TRACKLANE_IDLE_TICK must be a JSON object/],
    [{ TRACKLANE_IDLE_TICK: '{"idleTickMs":1500}' }, /^TRACKLANE_IDLE_TICK: idleTickMs/],
    [{ TRACKLANE_IDLE_TICK: '{"idleTickMS":5000}' }, /^TRACKLANE_IDLE_TICK: unknown field "idleTickMS"/],
  ];
  for (const [env, re] of bad) {
    it(`refuses ${JSON.stringify(env)} with a one-line reason`, () => {
      expect(() => loadConfig(env)).to.throw(ConfigError, re);
      try {
        loadConfig(env);
      } catch (e) {
        expect((e as Error).message).to.not.include('\n');
      }
    });
  }
});
