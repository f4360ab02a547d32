// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { SnapchatSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): SnapchatSettings {
  return { pixel_id: '8f9e4d2c-1b3a-4c5d-9e8f-7a6b5c4d3e2f', access_token: 'snap-token', endpoint };
}
