// The exported schema: self-contained JSON that /openapi.json can embed, compiled once.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { ajv, eventPayloadSchema, validateEvent } from '../../src/schema/index.ts';
import { FULL_CHECKOUT_COMPLETED, INVALID_CASES, VALID_PAYLOADS } from './fixtures.ts';

describe('eventPayloadSchema', () => {
  it('is plain JSON, frozen, without $id or $ref', () => {
    const json = JSON.stringify(eventPayloadSchema);
    expect(JSON.parse(json)).to.deep.equal(eventPayloadSchema);
    expect(json).to.not.include('"$ref"').and.not.include('"$id"');
    expect(Object.isFrozen(eventPayloadSchema)).to.equal(true);
    expect(Object.isFrozen(eventPayloadSchema.properties.products.items.properties)).to.equal(true);
  });

  it('compiles in a fresh draft 2020-12 validator that only knows format names', () => {
    const fresh = new Ajv2020({ allErrors: true, allowUnionTypes: true, validateFormats: false });
    const validate = fresh.compile(JSON.parse(JSON.stringify(eventPayloadSchema)));
    for (const { body } of VALID_PAYLOADS) expect(validate(body)).to.equal(true);
    expect(validate({ context: {} })).to.equal(false);
  });

  it('describes event-specific requirements as if/then on event.name', () => {
    expect(eventPayloadSchema.allOf).to.be.an('array').with.length.at.least(4);
    expect(JSON.stringify(eventPayloadSchema.allOf)).to.include('checkout_completed').and.include('cart_viewed');
  });

  it('is not compiled again per request', () => {
    const ctx = { approvedEvents: new Set<string>(SPEC_EVENT_NAMES), defaultTaxRate: null, host: null };
    const compile = ajv.compile.bind(ajv);
    let calls = 0;
    ajv.compile = ((...args: Parameters<typeof compile>) => { calls++; return compile(...args); }) as typeof ajv.compile;
    try {
      validateEvent(FULL_CHECKOUT_COMPLETED, ctx);
      validateEvent(INVALID_CASES[0].body, ctx);
    } finally {
      ajv.compile = compile;
    }
    expect(calls).to.equal(0);
  });

  it('validates a full checkout quickly (smoke check, not a benchmark)', () => {
    const ctx = { approvedEvents: new Set<string>(SPEC_EVENT_NAMES), defaultTaxRate: null, host: null };
    const n = 2000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) validateEvent(FULL_CHECKOUT_COMPLETED, ctx);
    const perCallMs = Number(process.hrtime.bigint() - start) / 1e6 / n;
    expect(perCallMs).to.be.below(1); // measured ≈ 0.03 ms; 30× headroom for slow CI machines
  });
});
