// validateEvent against the fixture tables (valid forms, one-error invalid cases, warnings,
// lenient edges), then normalisation, error reporting and the exported schema in detail.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { eventPayloadSchema, validateEvent } from '../../src/schema/index.ts';
import type { NormalizedEvent, ValidationResult } from '../../src/schema/types.ts';
import {
  ACCEPTED_EDGE_CASES,
  FULL_CART_VIEWED,
  FULL_CHECKOUT_COMPLETED,
  INVALID_CASES,
  MINIMAL_CART_VIEWED,
  MINIMAL_CHECKOUT_COMPLETED,
  MINIMAL_ORDER_CANCELED,
  MINIMAL_PRODUCT_VIEWED,
  VALID_PAYLOADS,
  WARNING_CASES,
} from './fixtures.ts';
import { REMOVE, variant } from './variant.ts';
import { account } from './context.ts';

/** Both ends of the account settings the tables must not depend on. */
const ACCOUNTS = { 'host and tax rate set': account(), 'no host, no tax rate': account({ host: null, defaultTaxRate: null }) };

const pairs = (r: ValidationResult) => r.errors.map((e) => ({ field: e.field, code: e.code }));
/** Validates and returns the normalised event, failing the test when there is an error. */
function accept(body: unknown, ctx = account()): { event: NormalizedEvent; result: ValidationResult } {
  const result = validateEvent(body, ctx);
  expect(result.errors, JSON.stringify(result.errors)).to.deep.equal([]);
  expect(result.event).to.not.equal(undefined);
  return { event: result.event as NormalizedEvent, result };
}

describe('validateEvent', () => {
  for (const [label, ctx] of Object.entries(ACCOUNTS)) {
    describe(`fixture tables (${label})`, () => {
      for (const { name, body } of VALID_PAYLOADS) {
        it(`accepts the ${name}`, () => {
          accept(body, ctx);
        });
      }

      for (const c of INVALID_CASES) {
        it(`refuses: ${c.name} → ${c.field || '(body)'} ${c.code}`, () => {
          const r = validateEvent(c.body, ctx);
          expect(pairs(r)).to.deep.equal([{ field: c.field, code: c.code }]);
          expect(r.event).to.equal(undefined);
          expect(r.errors[0].message).to.be.a('string').and.match(/^\S.*\S$/);
          if (c.field !== '') expect(r.errors[0].message).to.include(c.field);
        });
      }

      for (const c of WARNING_CASES) {
        it(`accepts with a warning: ${c.name} → ${c.warningField} ${c.warningCode}`, () => {
          const { result } = accept(c.body, ctx);
          expect(result.warnings.map((w) => ({ field: w.field, code: w.code })))
            .to.deep.include({ field: c.warningField, code: c.warningCode });
        });
      }

      for (const c of ACCEPTED_EDGE_CASES) {
        it(`accepts the edge case: ${c.name}`, () => {
          accept(c.body, ctx);
        });
      }
    });
  }

  describe('the tables', () => {
    it('hold at least 70 invalid cases, with unique names', () => {
      expect(INVALID_CASES.length).to.be.at.least(70);
      expect(new Set(INVALID_CASES.map((c) => c.name)).size).to.equal(INVALID_CASES.length);
    });

    it('cover every validation code the validator can produce', () => {
      const codes = new Set(INVALID_CASES.map((c) => c.code));
      for (const code of ['REQUIRED_FIELD_MISSING', 'INVALID_TYPE', 'INVALID_FORMAT', 'INVALID_VALUE', 'OUT_OF_RANGE',
        'INCONSISTENT_VALUE', 'HASHED_VALUE_NOT_ALLOWED', 'EVENT_NOT_APPROVED']) {
        expect(codes, code).to.include(code);
      }
    });

    it('are plain JSON data (they are also sent over HTTP)', () => {
      const all = { VALID_PAYLOADS, INVALID_CASES, WARNING_CASES, ACCEPTED_EDGE_CASES };
      expect(JSON.parse(JSON.stringify(all))).to.deep.equal(all);
    });
  });

  describe('error reporting', () => {
    it('reports every problem of a payload, not just the first', () => {
      const body = variant(FULL_CHECKOUT_COMPLETED,
        ['event.currency', 'EUX'], ['context.environment', 'production'], ['products.0.price', 120],
        ['shipping.0.value', REMOVE], ['user.email', 'nope']);
      expect(pairs(validateEvent(body, account()))).to.have.deep.members([
        { field: 'event.currency', code: 'INVALID_FORMAT' },
        { field: 'context.environment', code: 'INVALID_VALUE' },
        { field: 'products[0].price', code: 'INCONSISTENT_VALUE' },
        { field: 'shipping[0].value', code: 'REQUIRED_FIELD_MISSING' },
        { field: 'user.email', code: 'INVALID_FORMAT' },
      ]);
    });

    it('keeps validating after EVENT_NOT_APPROVED', () => {
      const body = variant(MINIMAL_ORDER_CANCELED, ['event.name', 'subscription_renewed'], ['context.environment', 'qa']);
      expect(pairs(validateEvent(body, account()))).to.have.deep.members([
        { field: 'event.name', code: 'EVENT_NOT_APPROVED' },
        { field: 'context.environment', code: 'INVALID_VALUE' },
      ]);
    });

    it('writes sentences a developer understands without the docs', () => {
      const r = validateEvent(variant(MINIMAL_CHECKOUT_COMPLETED, ['event.id', REMOVE], ['event.currency', 'EUX']), account());
      expect(r.errors.map((e) => e.message)).to.have.members([
        'event.id is required for checkout_completed events',
        'event.currency "EUX" is not an ISO 4217 currency code (for example "EUR", "USD" or "RON")',
      ]);
      const cart = validateEvent(variant(FULL_CART_VIEWED, ['event.value', 200]), account());
      expect(cart.errors[0].message).to.include('200').and.include('229.97');
    });

    it('reports a wrong type once, without the format or value errors behind it', () => {
      const body = variant(MINIMAL_CHECKOUT_COMPLETED, ['event.currency', 978], ['context.environment', false]);
      expect(pairs(validateEvent(body, account()))).to.have.deep.members([
        { field: 'context.environment', code: 'INVALID_TYPE' },
        { field: 'event.currency', code: 'INVALID_TYPE' },
      ]);
    });

    it('never echoes an e-mail, phone or IP address in a message', () => {
      const body = variant(FULL_CHECKOUT_COMPLETED,
        ['user.email', 'secret-person(at)example.com'], ['user.phone', 'call 0721 secret'], ['context.overide_ip', '10.0.0.999']);
      const text = validateEvent(body, account()).errors.map((e) => e.message).join(' ');
      expect(text).to.not.include('secret').and.not.include('10.0.0.999');
    });

    it('refuses a body that is not an object, on the whole body', () => {
      for (const body of [[], 'event', 42, null]) {
        expect(pairs(validateEvent(body, account()))).to.deep.equal([{ field: '', code: 'INVALID_TYPE' }]);
      }
    });

    it('applies the general rules to an operator-approved event name', () => {
      const ctx = account({ approvedEvents: new Set([...SPEC_EVENT_NAMES, 'subscription_renewed']) });
      const base = variant(MINIMAL_ORDER_CANCELED, ['event.name', 'subscription_renewed'], ['event.id', REMOVE]);
      accept(base, ctx); // value, currency and id optional
      expect(pairs(validateEvent(variant(base, ['event.value', 9.99]), ctx)))
        .to.deep.equal([{ field: 'event.currency', code: 'REQUIRED_FIELD_MISSING' }]);
      expect(pairs(validateEvent(variant(base, ['context', REMOVE]), ctx)))
        .to.deep.equal([{ field: 'context', code: 'REQUIRED_FIELD_MISSING' }]);
      expect(pairs(validateEvent(variant(base, ['event.id', ' x']), ctx)))
        .to.deep.equal([{ field: 'event.id', code: 'INVALID_FORMAT' }]);
    });
  });
});
