// Field paths and the deep copy the validator works on.
import { expect } from 'chai';
import { cloneJson } from '../../src/schema/clone-json.ts';
import { toField } from '../../src/schema/translate-errors.ts';

describe('toField', () => {
  const table: [string, string | undefined, string][] = [
    ['', undefined, ''],
    ['', 'event', 'event'],
    ['/event', 'id', 'event.id'],
    ['/products/1/price', undefined, 'products[1].price'],
    ['/products/0/coupons/2', 'value', 'products[0].coupons[2].value'],
    ['/cookies/10', undefined, 'cookies[10]'],
    ['/products/0/images/3', undefined, 'products[0].images[3]'],
  ];
  for (const [pointer, member, field] of table) {
    it(`${JSON.stringify(pointer)} + ${member ?? '-'} → ${JSON.stringify(field)}`, () => {
      expect(toField(pointer, member)).to.equal(field);
    });
  }
});

describe('cloneJson', () => {
  it('copies a JSON tree exactly, sharing nothing', () => {
    const src = { a: [1, 'x', null, true, { b: [[]] }], c: { d: { e: 1.5 } } };
    const copy = cloneJson(src);
    expect(copy).to.deep.equal(src);
    expect(copy.a).to.not.equal(src.a);
    expect(copy.c.d).to.not.equal(src.c.d);
    expect(cloneJson(null)).to.equal(null);
    expect(cloneJson('s')).to.equal('s');
  });

  it('keeps a __proto__ key as data, never as the prototype', () => {
    const src = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = cloneJson(src);
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).to.equal(true);
    expect((copy as { polluted?: boolean }).polluted).to.equal(undefined);
  });
});
