// Settings that pass this destination's schema, sending to `endpoint` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged,
// delivery fixtures) take them from here, so a destination needs nothing outside its folder.
// The webhook has no `endpoint` override: its `url` is where it sends.
import type { WebhookSettings } from './settings.ts';

export default function exampleSettings(endpoint: string): WebhookSettings {
  return { url: `${endpoint}/hooks/orders`, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
}
