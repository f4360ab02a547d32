// The build's generated validators (schema/generate-validators.ts) against ajv.compile of the
// same schema on the same instance settings: the same verdict and the very same errors
// (messages, paths, params, and the verbose schema/data members the translators read).
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnySchemaObject, ValidateFunction } from 'ajv';
import { createPayloadAjv, ajv as payloadAjv } from '../../src/schema/ajv.ts';
import { createDraft07Ajv } from '../../src/schema/ajv-draft07.ts';
import { eventPayloadSchema } from '../../src/schema/event-schema.ts';
import { consentFormatSchema } from '../../src/schema/object-schemas.ts';
import { generateValidatorsModule } from '../../src/schema/generate-validators.ts';
import { PRECOMPILED_FILE, precompiledOrCompile, type Dialect } from '../../src/schema/precompiled.ts';
import { RULE_FILE_SCHEMA } from '../../src/rules/rule-schema.ts';
import { endpointConfigSchema } from '../../src/customers/endpoint-config.ts';
import { shippedPlugins } from '../helpers/shipped-plugins.ts';
import { ACCEPTED_EDGE_CASES, INVALID_CASES, VALID_PAYLOADS, WARNING_CASES } from './fixtures.ts';

/** A custom endpoint's kind of schema: conditionals, multipleOf, formats, the annotation keyword. */
const BODY_SCHEMA = {
  type: 'object',
  required: ['order_id', 'total'],
  properties: {
    order_id: { type: 'string', minLength: 3, expectedFormat: 'an order number' },
    total: { type: 'number', multipleOf: 0.01, minimum: 0 },
    email: { type: 'string', format: 'email' },
    placed_at: { type: 'string', format: 'date-time' },
    status: { enum: ['new', 'paid'] },
    lines: { type: 'array', minItems: 1, items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } } },
  },
  if: { properties: { status: { const: 'paid' } } },
  then: { required: ['placed_at'] },
};
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const dialectOf = (schema: AnySchemaObject): Dialect => (schema.$schema === DRAFT_2020 ? 'draft2020' : 'draft07');
const WITH_ID = { $id: 'https://example.test/with-id', type: 'object', properties: { a: { type: 'string' } } };
const NOT_COMPILING = { type: 'object', properties: { a: { type: 'strin' } } };

describe('precompiled schema validators', () => {
  let dir: string;
  let plugins: Awaited<ReturnType<typeof shippedPlugins>>;
  const compilers = {} as Record<Dialect, <T = unknown>(schema: AnySchemaObject) => ValidateFunction<T>>;
  const fresh = { draft2020: createPayloadAjv(), draft07: createDraft07Ajv() };

  before(async () => {
    plugins = await shippedPlugins();
    const settings = [...plugins.values()].map(({ plugin }) => plugin.settingsSchema);
    const natives = [...plugins.values()].flatMap(({ plugin }) => (plugin.nativeSchema ? [plugin.nativeSchema] : []));
    const { source, count } = generateValidatorsModule({
      draft2020: [eventPayloadSchema, consentFormatSchema, RULE_FILE_SCHEMA, BODY_SCHEMA, WITH_ID, NOT_COMPILING,
        ...natives.filter((n) => dialectOf(n) === 'draft2020')],
      draft07: [endpointConfigSchema, ...settings, ...natives.filter((n) => dialectOf(n) === 'draft07')],
    });
    expect(count).to.equal(5 + settings.length + natives.length);
    dir = mkdtempSync(join(tmpdir(), 'precompiled-'));
    writeFileSync(join(dir, PRECOMPILED_FILE), source);
    // As from dist/: a compiled module beside the generated file.
    const url = pathToFileURL(join(dir, 'ajv.js')).href;
    compilers.draft2020 = precompiledOrCompile(createPayloadAjv(), 'draft2020', url);
    compilers.draft07 = precompiledOrCompile(createDraft07Ajv(), 'draft07', url);
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Both validators' verdicts and errors on each value, side by side. */
  function expectSame(dialect: Dialect, schema: AnySchemaObject, values: unknown[]): void {
    const generated = compilers[dialect](schema);
    expect(generated, 'a generated validator, not a compiled one').to.not.have.property('schemaEnv');
    const compiled = fresh[dialect].compile(schema);
    let failures = 0;
    for (const value of values) {
      const ok = compiled(value);
      expect(generated(value), JSON.stringify(value)).to.equal(ok);
      expect(generated.errors ?? null, JSON.stringify(value)).to.deep.equal(compiled.errors ?? null);
      if (!ok) failures++;
    }
    expect(failures, 'the values include refused ones').to.be.greaterThan(0);
  }

  it('give the event payload schema exactly the errors ajv.compile gives', () => {
    const bodies = [...INVALID_CASES, ...VALID_PAYLOADS, ...WARNING_CASES, ...ACCEPTED_EDGE_CASES].map((c) => c.body);
    expectSame('draft2020', eventPayloadSchema, [...bodies, null, [], { event: 7 }, { event: { name: '' }, products: 'x' }]);
  });

  it('give the service\'s own schemas and the consent shape the same errors', () => {
    expectSame('draft2020', consentFormatSchema, [{ analytics: true, personalization: false, marketing: true }, { analytics: 'yes' }, false]);
    expectSame('draft2020', RULE_FILE_SCHEMA, [{}, { destination: 'ga4', rules: [{}] }, { destination: 'Bad Name', rules: 'x', extra: 1 }]);
    expectSame('draft07', endpointConfigSchema, [{}, { auth: { type: 'nope' } }, { name: 3, auth: { type: 'api_key' } }]);
  });

  it('give the shipped plugins\' settings and native schemas the same errors', () => {
    for (const { plugin } of plugins.values()) {
      expectSame('draft07', plugin.settingsSchema, [{}, { endpoint: 5, events: 'all', unknown_key: 1 }, { consent_category: 7 }]);
      if (plugin.nativeSchema) expectSame(dialectOf(plugin.nativeSchema), plugin.nativeSchema, [{}, { events: 'x' }, []]);
    }
  });

  it('give a custom endpoint\'s schema the same errors, formats and multipleOf included', () => {
    expectSame('draft2020', BODY_SCHEMA, [
      { order_id: 'A-100', total: 19.99, email: 'a@b.co', status: 'paid', placed_at: '2026-01-02T03:04:05Z', lines: [{ sku: 'x' }] },
      { order_id: 'A', total: 19.999, email: 'nope', status: 'paid', lines: [{}] },
      { total: -1, placed_at: 'yesterday', status: 'lost', lines: [] },
    ]);
  });

  it('leave schemas with an $id, edited schemas and ones that do not compile to ajv.compile', () => {
    expect(compilers.draft2020(WITH_ID)).to.have.property('schemaEnv');
    expect(compilers.draft2020({ ...BODY_SCHEMA, required: ['order_id'] })).to.have.property('schemaEnv');
    expect(() => compilers.draft2020(NOT_COMPILING)).to.throw(/schema is invalid/);
  });

  it('are not used by the sources, which compile as before', () => {
    const fromSources = precompiledOrCompile(payloadAjv, 'draft2020', pathToFileURL(join(dir, 'ajv.ts')).href);
    expect(fromSources(BODY_SCHEMA)).to.have.property('schemaEnv');
  });
});
