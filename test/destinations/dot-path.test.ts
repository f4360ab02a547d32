// Dot-path expansion as plugins use it to build bodies.
import { expect } from 'chai';
import { expandBranch, expandDotPaths, setPath } from '../../src/destinations/dot-path.ts';

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

  it('one setPath, two explicit modes: strict throws where merge replaces or ignores', () => {
    const strict = { a: 1 } as Record<string, unknown>;
    expect(() => setPath(strict, 'a.b', 2, 'strict')).to.throw('conflicts with "a", which is not an object');
    expect(() => setPath(strict, 'x.__proto__', 2, 'strict')).to.throw('reserved name "__proto__"');
    setPath(strict, 'p.q', { r: 1 }, 'strict');
    setPath(strict, 'p.q', { s: 2 }, 'strict');
    expect(strict.p).to.deep.equal({ q: { s: 2 } }); // a later value wins whole
    const merged = { a: 1 } as Record<string, unknown>;
    setPath(merged, 'a.b', 2, 'merge');
    setPath(merged, 'x.__proto__', 2, 'merge');
    setPath(merged, 'p.q', { r: 1 }, 'merge');
    setPath(merged, 'p.q', { s: 2 }, 'merge');
    expect(merged).to.deep.equal({ a: { b: 2 }, p: { q: { r: 1, s: 2 } } });
  });
});
