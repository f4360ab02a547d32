// The /metrics counter of custom endpoint version uses, per account, endpoint, version and
// env: one per registry (each app has its own), so an operator can graph who still sends an
// old shape.
import { Counter, type Registry } from 'prom-client';

const NAME = 'tracklane_custom_endpoint_version_requests_total';
type Labels = 'script_id' | 'customer' | 'endpoint' | 'version' | 'env';

export function versionUseCounter(registry: Registry): Counter<Labels> {
  return (registry.getSingleMetric(NAME) as Counter<Labels> | undefined) ?? new Counter({
    name: NAME,
    help: 'Requests served by a custom endpoint version, by account, endpoint, version and env',
    labelNames: ['script_id', 'customer', 'endpoint', 'version', 'env'],
    registers: [registry],
  });
}
