// `npm run bench:noisy`: what one tenant's costly rules do to another tenant on the real
// server. The quiet tenant sends one checkout every 100 ms to endpoint 1 (a webhook
// delivering to a loopback double) while /healthz is probed every 50 ms, in three phases:
// alone; while the noisy tenant sends ~640 KB events (2,400 products) to endpoints 1 and 2
// without pause, with the shipped rules; and the same with account rules that serialise the
// whole event 25 times (as many as its rule file's cost bound accepts). Prints the quiet
// tenant's /healthz, intake and delivery latency per phase; the last two phases' ratio is
// what the rules cost the other tenant, beyond what the large events cost anyway.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';
import { benchAccount, benchSetup, checkout, startDoubles, startServer, stop } from './payloads.ts';

const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 10_000);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const r = await fetch(url, init);
  await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status };
}

async function main() {
  const { dataDir, env, doubles, account: quiet } = await benchSetup('Quiet', ['webhook'], true);
  const noisyDoubles = await startDoubles(['webhook']);
  const store = await openStore(loadConfig(env));
  const noisy = await benchAccount(store, 'Noisy', { doubles: noisyDoubles });
  await store.close();
  const rulesDir = mkdtempSync(join(tmpdir(), 'tl-bench-rules-'));
  cpSync(shippedFolders().rulesDir, rulesDir, { recursive: true });
  const { child, port } = await startServer({ ...env, RULES_DIR: rulesDir, ...shippedEnv() });
  const base = `http://127.0.0.1:${port}`;
  const quietWebhook = doubles.get('webhook')!;
  const big = checkout('NOISY');
  big.products = range(2_400).map((i) => ({
    id: `SKU-${i}`, name: `Product number ${i} ${'x'.repeat(150)}`, category: 'Kitchen', price_base: 1, price: 1, tax_percent: 19, quantity: 1,
  })) as typeof big.products;
  let seq = 0;

  async function phase(name: string, noisyLoad: boolean) {
    const stopAt = performance.now() + PHASE_MS;
    const health: number[] = [];
    const intake: number[] = [];
    const sent = new Map<string, number>();
    const noisyAnswers: number[] = [];
    const probes = (async () => {
      while (performance.now() < stopAt) {
        health.push((await timed(`${base}/healthz`)).ms);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const quietLoad = (async () => {
      while (performance.now() < stopAt) {
        const id = `${name}-${++seq}`;
        sent.set(id, Date.now());
        const r = await timed(`${base}/webhooks/service/event?id=${quiet.scriptId}`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': quiet.accessToken }, body: JSON.stringify(checkout(id)),
        });
        intake.push(r.ms);
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    const noise = noisyLoad ? range(2).map((k) => (async () => {
      while (performance.now() < stopAt) {
        const body = JSON.stringify({ ...big, event: { ...big.event, id: `noisy-${++seq}` } });
        const path = k === 0 ? 'event/test' : 'event';
        const r = await timed(`${base}/webhooks/service/${path}?id=${noisy.scriptId}`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': noisy.accessToken }, body,
        });
        noisyAnswers.push(r.status);
      }
    })()) : [];
    await Promise.all([probes, quietLoad, ...noise]);
    await quietWebhook.waitFor(() => [...sent.keys()].every((id) => quietWebhook.requests.some((q) => q.body.includes(`"${id}"`))), 60_000, 'quiet deliveries');
    const delivery = [...sent].map(([id, at]) => quietWebhook.requests.find((q) => q.body.includes(`"${id}"`))!.at - at);
    return { health, intake, delivery, noisy: noisyAnswers.length };
  }

  const alone = await phase('alone', false);
  const shipped = await phase('shipped', true);
  mkdirSync(join(rulesDir, 'accounts', noisy.scriptId), { recursive: true });
  writeFileSync(join(rulesDir, 'accounts', noisy.scriptId, 'webhook.json'), JSON.stringify({
    destination: 'webhook',
    rules: range(25).map((i) => ({ id: `noisy.copy${i}`, event: '*', when: { '!!': [{ to_string: { var: [] } }] }, output: { name: `copy${i}` } })),
  }));
  await new Promise((r) => setTimeout(r, 3_000)); // hot reload
  const loaded = await phase('noisy', true);
  const row = (what: string, a: number[], b: number[]) => console.log(
    `${what.padEnd(22)} p50 ${quantile(a, 0.5).toFixed(1).padStart(7)} → ${quantile(b, 0.5).toFixed(1).padStart(7)} ms (${(quantile(b, 0.5) / quantile(a, 0.5)).toFixed(2)}×)` +
    `   p90 ${quantile(a, 0.9).toFixed(1).padStart(7)} → ${quantile(b, 0.9).toFixed(1).padStart(7)} ms (${(quantile(b, 0.9) / quantile(a, 0.9)).toFixed(2)}×)`);
  const kb = (JSON.stringify(big).length / 1024).toFixed(0);
  for (const [title, a, b] of [
    [`quiet tenant alone → while the noisy tenant sent ${shipped.noisy} large events (${kb} KB each), shipped rules`, alone, shipped],
    [`noisy tenant, shipped rules (${shipped.noisy} events) → its 25 serialising rules (${loaded.noisy} events)`, shipped, loaded],
  ] as const) {
    console.log(title);
    row('/healthz', a.health, b.health);
    row('quiet intake', a.intake, b.intake);
    row('quiet delivery', a.delivery, b.delivery);
  }
  await stop(child);
  for (const d of [...doubles.values(), ...noisyDoubles.values()]) await d.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(rulesDir, { recursive: true, force: true });
}

function shippedEnv(): Record<string, string> {
  const { pluginsDir, customersDir } = shippedFolders();
  return { PLUGINS_DIR: pluginsDir, CUSTOMERS_DIR: customersDir };
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
