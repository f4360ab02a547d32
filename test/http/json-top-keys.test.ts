// The top-level members of JSON text, read before it is parsed (batch intake's envelope check).
import { expect } from 'chai';
import { topLevelKeys } from '../../src/http/json-top-keys.ts';

describe('topLevelKeys', () => {
  it('lists the top level\'s keys in order, repeats included, decoded', () => {
    expect(topLevelKeys('{"batch":[{"batch":1}],"batch":[]}')).to.deep.equal(['batch', 'batch']);
    expect(topLevelKeys(' {\n "a" : "x:y" , "b\\u0061tch":{"c":{"d":[]}},"e\\"":"}" } ')).to.deep.equal(['a', 'batch', 'e"']);
    expect(topLevelKeys('{}')).to.deep.equal([]);
    expect(topLevelKeys('{"s":"[{\\\\","t":1}')).to.deep.equal(['s', 't']);
  });

  it('leaves what is not an object, or does not scan, to the parser', () => {
    for (const text of ['[1]', '"x"', '', '{"a":1', '{"a', '{"\\x":1}']) expect(topLevelKeys(text), text).to.equal(undefined);
  });
});
