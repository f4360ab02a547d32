// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
import type { RedditSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): RedditSettings {
  return { pixel_id: 'a2_gp7k2m9xq1', access_token: 'rdt-token', endpoint };
}
