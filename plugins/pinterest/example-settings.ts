// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { PinterestSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): PinterestSettings {
  return { ad_account_id: '549755885175', access_token: 'pina-token', endpoint };
}
