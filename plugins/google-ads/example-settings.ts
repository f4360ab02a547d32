// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { GoogleAdsSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): GoogleAdsSettings {
  return {
    customer_id: '123-456-7890', developer_token: 'ads-dev-token', access_token: 'ads-token', conversion_actions: { checkout_completed: '1001' }, endpoint,
  };
}
