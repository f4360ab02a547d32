// The HTTP thread's event-loop delay gauges (src/http/loop-delay.ts) sample only while the
// server serves: prom-client's own sampling every 10 ms, for ever, was most of what an idle
// instance spent.
import { expect } from 'chai';
import { createHook } from 'node:async_hooks';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/logger.ts';
import { requestContext } from '../../src/http/request-context.ts';
import { registerLoopDelay } from '../../src/http/loop-delay.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { waitFor } from '../helpers/test-server.ts';

/** The value of `name` in the registry's text, or undefined. */
async function read(registry: Registry, name: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('event-loop delay gauges', () => {
  it('sample from a request until idleMs after the last one; a scrape with no sample since the last reads 0', async () => {
    const registry = new Registry();
    const delay = registerLoopDelay(registry, 'x_', { idleMs: 100 });
    try {
      expect(delay.sampling).to.equal(false);
      delay.busy();
      expect(delay.sampling).to.equal(true);
      await new Promise((r) => setTimeout(r, 50));
      delay.busy(); // a later request pushes the end back
      expect(await waitFor(() => !delay.sampling, 2_000), 'sampling stops once idle').to.equal(true);
      expect(await read(registry, 'x_nodejs_eventloop_lag_p50_seconds')).to.be.greaterThan(0.005); // ~10 ms ticks
      expect(await read(registry, 'x_nodejs_eventloop_lag_p50_seconds'), 'nothing sampled since').to.equal(0);
    } finally {
      delay.close();
    }
  });

  it('looks again a whole idleMs later when a request came meanwhile, never on a timer of what is left (an idle thread would wake for a few ms)', async () => {
    const periods: number[] = [];
    const hook = createHook({
      init(_id, type, _trigger, resource) {
        if (type === 'Timeout') periods.push((resource as { _idleTimeout: number })._idleTimeout);
      },
    });
    let clock = 0;
    const delay = registerLoopDelay(new Registry(), 'y_', { idleMs: 300, now: () => clock });
    try {
      const slept = new Promise((r) => setTimeout(r, 500)); // made before the hook: not counted
      hook.enable();
      delay.busy(); // the timer: 300 ms
      clock = 290;
      delay.busy(); // a request 290 ms later: when the timer fires, 290 ms of idleMs are left
      clock = 300;
      await slept;
      hook.disable();
      // (Other timers of the process, a minute or so, are not the gauges'.)
      expect(periods.filter((ms) => ms <= 300), 'the first timer, then the look again').to.deep.equal([300, 300]);
      expect(delay.sampling, 'still sampling: the last request was under idleMs ago').to.equal(true);
      clock = 10_000;
      expect(await waitFor(() => !delay.sampling, 2_000), 'then stops').to.equal(true);
    } finally {
      hook.disable();
      delay.close();
    }
  });

  it('replace prom-client\'s in the server\'s registry: one gauge of each name, not sampling until a request', async () => {
    const metrics = createMetrics();
    try {
      const text = await metrics.registry.metrics();
      for (const k of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
        expect(text.split('\n').filter((l) => l.startsWith(`# TYPE tracklane_nodejs_eventloop_lag_${k}_seconds `)), k).to.have.length(1);
      }
      expect(text).to.match(/^tracklane_nodejs_eventloop_lag_seconds /m);
      expect(metrics.loopDelay?.sampling).to.equal(false);
    } finally {
      metrics.loopDelay?.close();
    }
  });

  it('a probe or a scrape does not start the sampling; any other request does', async () => {
    const metrics = createMetrics();
    const koa = new Koa();
    koa.use(requestContext({ logger: createLogger('silent'), metrics }));
    koa.use((ctx) => {
      ctx.body = 'ok';
    });
    const server = createServer(koa.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const path of ['/healthz', '/readyz', '/metrics']) await (await fetch(`${url}${path}`)).text();
      expect(metrics.loopDelay?.sampling, 'after probes and a scrape').to.equal(false);
      await (await fetch(`${url}/webhooks/service/event`, { method: 'POST' })).text();
      expect(metrics.loopDelay?.sampling, 'after an intake request').to.equal(true);
    } finally {
      metrics.loopDelay?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
