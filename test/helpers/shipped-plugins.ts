// The core's tests reach the SDK's test harness (src/sdk/testing/, `tracklane/sdk/testing`) here.
export * from '../../src/sdk/testing/shipped-plugins.ts';
