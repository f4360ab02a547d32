// `tracklane/sdk/testing`: what a plugin's or a custom endpoint's tests may use, beside chai
// and mocha (the service's own, when run with `npx tracklane test FOLDER`). Like `tracklane/sdk`,
// the only way a test under plugins/ or customers/ reaches the service; docs/sdk.md, "Testing".

// ---- a plugin on its own -----------------------------------------------------------------
export { normalizedEvent, reply } from './testing/plugin-fixtures.ts';
export { settingsSchemaCases, outcomeCases, type SettingsCase, type OutcomeCase } from './testing/plugin-cases.ts';
export { loadPlugins, loadPluginFolder, type LoadedPlugin, type PluginRegistry } from '../destinations/load-plugins.ts';
export { shippedPlugins } from './testing/shipped-plugins.ts';
export { exampleSettingsOf, type ExampleSettings } from './testing/example-settings.ts';

// ---- an event through a plugin, as the pipeline maps it ------------------------------------
export {
  goldenHarness, previewEvent, expectReady, expectOneRequest, expectSkipped,
  type GoldenHarness, type GoldenSetup, type PreviewOptions, type ExpectedRequest,
} from './testing/plugin-harness.ts';

// ---- the running service -------------------------------------------------------------------
export {
  startTestServer, tempDir, waitFor,
  type TestServer, type TestServerOptions, type TestAccount, type TestResponse, type PostOptions,
} from './testing/test-server.ts';
export { INTAKE_PATHS } from '../http/intake-routes.ts';
export { startDestinationDouble, type DestinationDouble, type ScriptedResponse, type RecordedRequest } from './testing/destination-double.ts';

// ---- a custom endpoint -----------------------------------------------------------------------
export { startEndpointHarness, expect, type EndpointHarness, type HarnessOptions, type CustomPostOptions } from './testing/endpoint-harness.ts';
