// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { MicrosoftAdsSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): MicrosoftAdsSettings {
  return { tag_id: '97247724', access_token: 'uet-token', endpoint };
}
