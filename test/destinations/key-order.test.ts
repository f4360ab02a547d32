// withKeyOrder: listed keys first, then the rest as they came.
import { expect } from 'chai';
import { withKeyOrder } from '../../src/destinations/key-order.ts';

describe('destinations: key-order', () => {
  it('puts the listed keys first, in list order, then the others in their own order', () => {
    const out = withKeyOrder({ z: 1, b: 2, y: 3, a: 4 }, ['a', 'b', 'c']);
    expect(JSON.stringify(out)).to.equal('{"a":4,"b":2,"z":1,"y":3}');
  });

  it('leaves out listed keys that are absent, and returns a copy', () => {
    const input = { b: 1 };
    const out = withKeyOrder(input, ['a', 'b']);
    expect(out).to.deep.equal({ b: 1 });
    expect(out).not.to.equal(input);
  });
});
