// chunk: batches of at most n, order kept.
import { expect } from 'chai';
import { chunk } from '../../src/destinations/chunk.ts';

describe('destinations: chunk', () => {
  it('splits in order, the last part shorter', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).to.deep.equal([[1, 2], [3, 4], [5]]);
  });

  it('gives one part when the list fits, and none for an empty list', () => {
    expect(chunk(['a', 'b'], 1000)).to.deep.equal([['a', 'b']]);
    expect(chunk([], 3)).to.deep.equal([]);
  });

  it('refuses a size that would never advance', () => {
    expect(() => chunk([1], 0)).to.throw(RangeError);
    expect(() => chunk([1], 1.5)).to.throw(RangeError);
  });
});
