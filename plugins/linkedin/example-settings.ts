// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { LinkedInSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): LinkedInSettings {
  return { access_token: 'li-token', conversion_rules: { checkout_completed: '104012' }, endpoint };
}
