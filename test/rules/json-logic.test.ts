import { expect } from 'chai';
import { checkExpression } from '../../src/rules/check-expression.ts';
import { CUSTOM_OPERATION_NAMES, OPERATIONS, evaluate, truthy } from '../../src/rules/json-logic.ts';

describe('json-logic setup', () => {
  it('a {"var": path} answers as json-logic\'s own var, inside other operations too', () => {
    // {"var": [path]} takes json-logic's generic path; {"var": path} the lookup of split paths.
    const data = {
      event: { id: 'E-1', value: 0, empty: '', none: null, flag: false, list: [{ name: 'a' }, null], text: 'abc' },
      products: [{ id: 'P1', price: 5 }, { id: 'P2' }],
    };
    const paths = ['event.id', 'event.value', 'event.empty', 'event.none', 'event.none.deeper', 'event.flag', 'event.list.0.name',
      'event.list.1.name', 'event.list.5', 'event.text.length', 'event.text.0', 'event.value.toFixed', 'event.missing', 'missing.deeper',
      'products', 'products.1.price', 'event..id', 'event.constructor', 'event'];
    for (const p of paths) {
      expect(evaluate({ var: p }, data), p).to.deep.equal(evaluate({ var: [p] }, data));
      expect(evaluate({ var: p }, null), `${p} of null`).to.deep.equal(evaluate({ var: [p] }, null));
    }
    const scoped = { map: [{ var: 'products' }, { cat: [{ var: 'id' }, ':', { var: 'price' }] }] };
    expect(evaluate(scoped, data)).to.deep.equal(['P1:5', 'P2:']);
    const rule = { var: 'event.id' };
    expect(evaluate(rule, data)).to.equal('E-1');
    expect(evaluate(rule, { event: { id: 'E-2' } }), 'the same expression object with other data').to.equal('E-2');
  });

  describe('removed operations', () => {
    it('method throws instead of calling a method on the data', () => {
      expect(() => evaluate({ method: [{ var: 'name' }, 'toUpperCase'] }, { name: 'abc' })).to.throw(/Unrecognized operation method/);
      expect(() => evaluate({ method: ['abc', 'constructor'] }, {})).to.throw(/Unrecognized operation method/);
    });

    it('log throws instead of printing event data', () => {
      expect(() => evaluate({ log: { var: 'user.email' } }, { user: { email: 'a@b.c' } })).to.throw(/Unrecognized operation log/);
    });

    it('neither is a known operation for the load-time check', () => {
      expect(OPERATIONS.has('method')).to.equal(false);
      expect(OPERATIONS.has('log')).to.equal(false);
      expect(checkExpression({ method: ['x', 'toString'] }, '/x')).to.deep.equal([
        { path: '/x', message: 'operation "method" is not allowed in rules' },
      ]);
    });
  });

  it('every operation the load-time check accepts is registered', () => {
    for (const op of OPERATIONS) {
      const args = op === 'if' || op === '?:' ? [true, 1, 2] : op === 'object' ? [] : [[], null];
      try {
        evaluate({ [op]: args }, {});
      } catch (err) {
        expect((err as Error).message, op).not.to.match(/Unrecognized operation/);
      }
    }
  });

  it('registers the documented custom operations', () => {
    expect([...CUSTOM_OPERATION_NAMES].sort()).to.deep.equal([
      'cookie', 'count', 'first', 'iso_datetime', 'lower', 'ms_to_s', 'ms_to_us', 'object', 'omit', 'pick',
      'round', 'sum', 'sum_items', 'to_number', 'to_string', 'upper',
    ]);
  });

  describe('object', () => {
    it('builds nested objects from dot paths and drops absent values', () => {
      const out = evaluate(
        { object: ['a', 1, 'b.c', { var: 'x' }, 'b.d', null, 'e', { var: 'missing' }, 'f.g.h', 'deep', 'n', { '/': [0, 0] }] },
        { x: 'X' },
      );
      expect(out).to.deep.equal({ a: 1, b: { c: 'X' }, f: { g: { h: 'deep' } } });
    });

    it('keeps empty strings, zero and false', () => {
      expect(evaluate({ object: ['s', '', 'z', 0, 'f', false] }, {})).to.deep.equal({ s: '', z: 0, f: false });
    });

    it('with map builds one object per element, the element as data', () => {
      const data = { products: [{ id: 'A', price: 10, quantity: 2 }, { id: 'B', price: 5 }] };
      expect(evaluate({ map: [{ var: 'products' }, { object: ['item_id', { var: 'id' }, 'qty', { var: 'quantity' }, 'p.v', { var: 'price' }] }] }, data))
        .to.deep.equal([{ item_id: 'A', qty: 2, p: { v: 10 } }, { item_id: 'B', p: { v: 5 } }]);
    });

    it('refuses odd pairs, non-string keys and reserved names', () => {
      expect(() => evaluate({ object: ['a', 1, 'b'] }, {})).to.throw(/key\/value pairs/);
      expect(() => evaluate({ object: [1, 1] }, {})).to.throw(/not a string/);
      expect(() => evaluate({ object: ['__proto__.x', 1] }, {})).to.throw(/not a usable dot path/);
      expect(({} as Record<string, unknown>).x).to.equal(undefined);
    });
  });

  describe('cookie', () => {
    const data = { cookies: [{ name: '_ga', value: ' GA1.1.1.2 ' }, { name: 'enc', value: 'a%20b' }, { name: '_ga', value: 'second' }] };

    it('reads the first value of the top-level cookies, trimmed and decoded', () => {
      expect(evaluate({ cookie: '_ga' }, data)).to.equal('GA1.1.1.2');
      expect(evaluate({ cookie: ['enc'] }, data)).to.equal('a b');
      expect(evaluate({ cookie: 'none' }, data)).to.equal(null);
    });

    it('reads an explicit list or map as second argument', () => {
      expect(evaluate({ cookie: ['x', { var: 'jar' }] }, { jar: [{ name: 'x', value: '1' }] })).to.equal('1');
      expect(evaluate({ cookie: ['x', { var: 'jar' }] }, { jar: { x: '2' } })).to.equal('2');
    });

    it('finds nothing inside map, where the data is the element', () => {
      expect(evaluate({ map: [{ var: 'items' }, { cookie: '_ga' }] }, { ...data, items: [1] })).to.deep.equal([null]);
    });
  });

  it('sum_items: Σ price × quantity, quantity 1 by default, without float noise', () => {
    const products = [{ price: 0.1, quantity: 3 }, { price: '2.5' }, { price: 'x', quantity: 9 }, { quantity: 1 }, 'junk'];
    expect(evaluate({ sum_items: [{ var: 'products' }] }, { products })).to.equal(2.8);
    expect(evaluate({ sum_items: [{ var: 'products' }, 'base', 'qty'] }, { products: [{ base: 4, qty: 2 }] })).to.equal(8);
    expect(evaluate({ sum_items: [{ var: 'nothing' }] }, {})).to.equal(null);
    expect(evaluate({ sum_items: [[]] }, {})).to.equal(0);
  });

  it('sum and count', () => {
    const data = { products: [{ quantity: 2 }, { quantity: '3' }, {}], values: [1, 2.5, 'x'] };
    expect(evaluate({ sum: [{ var: 'products' }, 'quantity'] }, data)).to.equal(5);
    expect(evaluate({ sum: [{ var: 'values' }] }, data)).to.equal(3.5);
    expect(evaluate({ count: { var: 'products' } }, data)).to.equal(3);
    expect(evaluate({ count: { var: 'none' } }, data)).to.equal(0);
  });

  it('ms_to_us and ms_to_s', () => {
    expect(evaluate({ ms_to_us: 1700000000123 }, {})).to.equal(1700000000123000);
    expect(evaluate({ ms_to_us: '1.5' }, {})).to.equal(1500);
    expect(evaluate({ ms_to_s: 1700000000999 }, {})).to.equal(1700000000);
    expect(evaluate({ ms_to_s: { var: 'x' } }, {})).to.equal(null);
  });

  it('first: the first argument that is not null, blank or empty', () => {
    expect(evaluate({ first: [{ var: 'a' }, '', '  ', [], { var: 'b' }, 'c'] }, { b: 0 })).to.equal(0);
    expect(evaluate({ first: [{ var: 'a' }, 'fallback'] }, {})).to.equal('fallback');
    expect(evaluate({ first: [null, ''] }, {})).to.equal(null);
  });

  it('round: half away from zero, 2 decimals by default', () => {
    expect(evaluate({ round: 1.005 }, {})).to.equal(1.01);
    expect(evaluate({ round: [-1.005] }, {})).to.equal(-1.01);
    expect(evaluate({ round: [2.5, 0] }, {})).to.equal(3);
    expect(evaluate({ round: ['12.3456', 3] }, {})).to.equal(12.346);
    expect(evaluate({ round: ['abc'] }, {})).to.equal(null);
    expect(evaluate({ round: [1, 11] }, {})).to.equal(null);
  });

  it('lower, upper, to_string, to_number', () => {
    expect(evaluate({ lower: 'AbC' }, {})).to.equal('abc');
    expect(evaluate({ upper: 'eur' }, {})).to.equal('EUR');
    expect(evaluate({ lower: { var: 'x' } }, {})).to.equal(null);
    expect(evaluate({ to_string: 12.5 }, {})).to.equal('12.5');
    expect(evaluate({ to_string: true }, {})).to.equal('true');
    expect(evaluate({ to_string: [[1, 'a']] }, {})).to.equal('[1,"a"]');
    expect(evaluate({ to_string: { var: 'x' } }, {})).to.equal(null);
    expect(evaluate({ to_number: ' 19.90 ' }, {})).to.equal(19.9);
    expect(evaluate({ to_number: 'abc' }, {})).to.equal(null);
    expect(evaluate({ to_number: true }, {})).to.equal(null);
  });

  it('iso_datetime: RFC 3339 with a space and whole seconds by default, iso and date on request', () => {
    expect(evaluate({ iso_datetime: 1700000000123 }, {})).to.equal('2023-11-14 22:13:20+00:00');
    expect(evaluate({ iso_datetime: [1700000000123, 'rfc3339_space'] }, {})).to.equal('2023-11-14 22:13:20+00:00');
    expect(evaluate({ iso_datetime: [1700000000123, 'iso'] }, {})).to.equal('2023-11-14T22:13:20.123Z');
    expect(evaluate({ iso_datetime: [1700000000123, 'date'] }, {})).to.equal('2023-11-14');
    expect(evaluate({ iso_datetime: 'soon' }, {})).to.equal(null);
    expect(() => evaluate({ iso_datetime: [0, 'rfc'] }, {})).to.throw(/unknown format/);
  });

  it('pick and omit', () => {
    const user = { id: 'u1', email: 'a@b.c', phone: null, country: 'RO' };
    expect(evaluate({ pick: [{ var: 'user' }, 'id', 'phone', 'country', 'nope'] }, { user })).to.deep.equal({ id: 'u1', country: 'RO' });
    expect(evaluate({ pick: [{ var: 'user' }, ['id']] }, { user })).to.deep.equal({ id: 'u1' });
    expect(evaluate({ omit: [{ var: 'user' }, 'email', 'phone'] }, { user })).to.deep.equal({ id: 'u1', country: 'RO' });
    expect(evaluate({ pick: ['x', 'a'] }, {})).to.equal(null);
  });

  it('truthy follows json-logic: an empty array is false', () => {
    expect(truthy([])).to.equal(false);
    expect(truthy([0])).to.equal(true);
    expect(truthy('')).to.equal(false);
  });
});

describe('checkExpression', () => {
  it('accepts literals, built-ins and custom operations', () => {
    expect(checkExpression('purchase', '/o')).to.deep.equal([]);
    expect(checkExpression([1, 'a', null, {}], '/o')).to.deep.equal([]);
    expect(checkExpression({ map: [{ var: 'products' }, { object: ['a.b', { first: [{ var: 'x' }, 1] }] }] }, '/o')).to.deep.equal([]);
  });

  it('names the JSON pointer of each unknown operation, with a hint', () => {
    expect(checkExpression({ if: [{ var: 'a' }, { sumitems: [] }, { 'x.y': 1 }] }, '/rules/0/output/v')).to.deep.equal([
      { path: '/rules/0/output/v/if/1', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' },
      { path: '/rules/0/output/v/if/2', message: 'unknown operation "x.y"' },
    ]);
  });

  it('refuses literal objects with several keys: json-logic would not evaluate them', () => {
    expect(checkExpression({ map: [{ var: 'p' }, { id: { var: 'id' }, price: 1 }] }, '/o')[0]).to.deep.equal({
      path: '/o/map/1',
      message: 'an object with 2 keys is not evaluated by json-logic; build objects with dot-path output keys or {"object": [key, value, …]}',
    });
  });

  it('checks arities json-logic would misread and object keys', () => {
    expect(checkExpression({ map: [{ var: 'p' }] }, '/o')).to.deep.equal([{ path: '/o/map', message: '"map" takes 2 arguments, got 1' }]);
    expect(checkExpression({ object: ['a', 1, 'b'] }, '/o')).to.deep.equal([{ path: '/o/object', message: '"object" takes key/value pairs, got 3 arguments' }]);
    expect(checkExpression({ object: ['a..b', 1, 5, 2] }, '/o')).to.deep.equal([
      { path: '/o/object/0', message: 'key "a..b" has an empty segment' },
      { path: '/o/object/2', message: '"object" keys must be strings' },
    ]);
  });

  it('escapes / and ~ in pointers', () => {
    expect(checkExpression({ 'a/b~': 1 }, '/o')).to.deep.equal([{ path: '/o', message: 'unknown operation "a/b~"' }]);
    expect(checkExpression({ map: [[], { nope: 1 }] }, '/output/x~1y')[0].path).to.equal('/output/x~1y/map/1');
  });
});
