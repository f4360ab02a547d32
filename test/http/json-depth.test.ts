// The depth scan that runs before JSON.parse: the walk's measure, strings skipped exactly.
import { expect } from 'chai';
import { nestedDeeperThan } from '../../src/http/json-depth.ts';
import { checkJsonSafety } from '../../src/http/json-safety.ts';

describe('nestedDeeperThan', () => {
  it('agrees with the JSON-safety walk on where too deep begins', () => {
    for (const levels of [31, 32, 33]) {
      const text = '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
      const walked = checkJsonSafety(JSON.parse(text)) !== null;
      expect(nestedDeeperThan(text, 32), `${levels} levels`).to.equal(walked);
    }
    expect(nestedDeeperThan('[[[]]]', 3)).to.equal(false);
    expect(nestedDeeperThan('[[[[]]]]', 3)).to.equal(true);
    expect(nestedDeeperThan('[[],[],[[]]]', 3)).to.equal(false);
  });

  it('does not count brackets inside strings, escaped quotes and backslashes included', () => {
    const inside = JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[[" \\\\', c: '\\', d: ['"[[[[', '\\"'] });
    expect(nestedDeeperThan(inside, 2)).to.equal(false);
    expect(nestedDeeperThan(JSON.stringify({ k: '\\' }) + '[[[', 2)).to.equal(true);
  });

  it('stops at the first bracket past the limit, even in text that never ends', () => {
    expect(nestedDeeperThan('{"a":' + '['.repeat(100), 32)).to.equal(true);
    expect(nestedDeeperThan('{"a":"[[[[[[', 2)).to.equal(false);
  });
});
