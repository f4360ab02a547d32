// What a lane reports for one request's result: attempts once, each applied delivery counted
// under its status (one increment per status, however many the request carried), lag only
// for what was delivered, nothing for updates the store did not apply.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerDeliveryMetrics } from '../../src/delivery/delivery-metrics.ts';
import { observeAttempt } from '../../src/delivery/lane-report.ts';

describe('lane report: metrics of one request', () => {
  it('counts applied deliveries per status and observes the lag of those delivered', async () => {
    const registry = new Registry();
    const m = registerDeliveryMetrics(registry);
    const now = 10_000;
    const deliveries = [{ receivedAt: 9_000 }, { receivedAt: 8_000 }, { receivedAt: 7_000 }, { receivedAt: 6_000 }];
    const updates = [
      { id: 1, status: 'delivered' as const, attempts: 1, nextAttemptAt: null },
      { id: 2, status: 'delivered' as const, attempts: 1, nextAttemptAt: null },
      { id: 3, status: 'delivered' as const, attempts: 1, nextAttemptAt: null }, // lost its lease: not applied
      { id: 4, status: 'delivered' as const, attempts: 2, nextAttemptAt: null },
    ];
    observeAttempt(m, 'meta-capi', deliveries, updates, { outcome: 'success', message: 'ok' }, [1, 2, 4], now);
    observeAttempt(m, 'meta-capi', [{ receivedAt: 9_500 }], [{ id: 5, status: 'pending', attempts: 1, nextAttemptAt: 20_000 }],
      { outcome: 'retryable', message: '503', overload: false }, [5], now);
    const text = await registry.metrics();
    expect(text).to.include('tracklane_delivery_attempts_total{destination_type="meta-capi",outcome="success"} 1');
    expect(text).to.include('tracklane_delivery_attempts_total{destination_type="meta-capi",outcome="retryable"} 1');
    expect(text).to.include('tracklane_deliveries_total{destination_type="meta-capi",status="delivered"} 3');
    expect(text).to.include('tracklane_deliveries_total{destination_type="meta-capi",status="retry"} 1');
    expect(text).to.include('tracklane_delivery_lag_seconds_count{destination_type="meta-capi"} 3');
    expect(text).to.include('tracklane_delivery_lag_seconds_sum{destination_type="meta-capi"} 7');
  });
});
