// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { MetaCapiSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): MetaCapiSettings {
  return { pixel_id: '1234567890', access_token: 'meta-token', endpoint };
}
