import { expect } from 'chai';
import { checkJsonSafety, DEFAULT_JSON_LIMITS } from '../../src/http/json-safety.ts';

describe('checkJsonSafety', () => {
  it('accepts an ordinary event body', () => {
    expect(checkJsonSafety({ event: { name: 'x', value: 1.5 }, products: [{ id: 'a', tags: ['x'] }] })).to.equal(null);
  });

  it('refuses depth beyond 32 and names the place', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 33; i++) deep = { a: deep };
    const p = checkJsonSafety(deep);
    expect(p?.message).to.match(/deeper than 32/);
    let ok: unknown = 1;
    for (let i = 0; i < 32; i++) ok = { a: ok };
    expect(checkJsonSafety(ok)).to.equal(null);
  });

  it('walks a 300,000-deep array without overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(300_000) + ']'.repeat(300_000));
    expect(checkJsonSafety(deep)?.message).to.match(/deeper/);
  });

  for (const key of ['__proto__', 'constructor', 'prototype']) {
    it(`refuses a "${key}" key at any depth`, () => {
      const body = JSON.parse(`{"event":{"properties":{"x":[{"${key}":{"polluted":1}}]}}}`);
      const p = checkJsonSafety(body);
      expect(p?.field).to.equal(`event.properties.x[0].${key}`);
    });
  }

  it('refuses non-finite numbers', () => {
    const body = JSON.parse('{"event":{"value":1e400}}');
    expect(checkJsonSafety(body)).to.deep.equal({ field: 'event.value', message: 'event.value is not a finite number' });
    expect(checkJsonSafety(JSON.parse('[-1e400]'))?.field).to.equal('[0]');
  });

  it('bounds key length at 256 characters, naming the parent and the key\'s start', () => {
    const long = 'k'.repeat(400_000);
    expect(checkJsonSafety({ event: { properties: { [long]: 1 } } })).to.deep.equal({
      field: `event.properties.${'k'.repeat(32)}…`, message: 'event.properties has a key longer than 256 characters',
    });
    expect(checkJsonSafety({ event: { properties: { ['k'.repeat(256)]: 1 } } })).to.equal(null);
    expect(DEFAULT_JSON_LIMITS.maxKeyLength).to.equal(256);
  });

  it('bounds array length, key count and string length', () => {
    expect(checkJsonSafety({ products: new Array(DEFAULT_JSON_LIMITS.maxArrayLength + 1).fill(0) })?.field).to.equal('products');
    const many: Record<string, number> = {};
    for (let i = 0; i <= DEFAULT_JSON_LIMITS.maxKeys; i++) many[`k${i}`] = i;
    expect(checkJsonSafety({ user: { properties: many } })?.field).to.equal('user.properties');
    expect(checkJsonSafety({ user: { email: 'a'.repeat(DEFAULT_JSON_LIMITS.maxStringLength + 1) } })?.field).to.equal('user.email');
  });
});
