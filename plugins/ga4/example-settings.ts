// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { Ga4Settings } from './settings.ts';

export default function exampleSettings(endpoint: string): Ga4Settings {
  return { measurement_id: 'G-TEST123', api_secret: 'ga-secret', endpoint };
}
