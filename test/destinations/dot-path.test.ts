// Dot-path expansion as plugins use it to build bodies.
import { expect } from 'chai';
import { expandBranch, expandDotPaths } from '../../src/destinations/dot-path.ts';

describe('destinations: dot-path', () => {
  it('expandDotPaths nests flat keys in order of first appearance', () => {
    expect(JSON.stringify(expandDotPaths({ 'a.b': 1, c: 2, 'a.d': 3 }))).to.equal('{"a":{"b":1,"d":3},"c":2}');
  });

  describe('expandBranch', () => {
    it('keeps only the paths under the key, nested', () => {
      const flat = { 'user_data.em': ['e1', 'e2'], 'user.email': 'x', 'user_data.address.ct': 'cluj', user_id: 'u' };
      expect(expandBranch(flat, 'user_data')).to.deep.equal({ em: ['e1', 'e2'], address: { ct: 'cluj' } });
    });

    it('gives a fresh empty object when nothing is under the key', () => {
      const a = expandBranch({ 'user.email': 'x' }, 'user_data');
      const b = expandBranch({}, 'user_data');
      expect(a).to.deep.equal({});
      expect(b).to.deep.equal({});
      expect(a).not.to.equal(b);
    });
  });
});
