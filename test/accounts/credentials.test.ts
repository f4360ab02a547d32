import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { hashToken, newAccessToken, newScriptId, SCRIPT_ID_RE, tokenMatches } from '../../src/accounts/credentials.ts';

describe('credentials', () => {
  it('script ids are 8 × [A-Z0-9] and vary', () => {
    const ids = new Set(Array.from({ length: 500 }, newScriptId));
    for (const id of ids) expect(id).to.match(SCRIPT_ID_RE);
    expect(ids.size).to.equal(500);
  });

  it('tokens carry the tlk_ prefix and 192 random bits', () => {
    const t = newAccessToken();
    expect(t).to.match(/^tlk_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(t.slice(4), 'base64url')).to.have.length(24);
    expect(newAccessToken()).to.not.equal(t);
  });

  it('stores SHA-256 hex of the token', () => {
    expect(hashToken('tlk_abc')).to.equal(createHash('sha256').update('tlk_abc').digest('hex'));
  });

  it('matches against any stored hash and never throws on odd input', () => {
    const t = newAccessToken();
    const hashes = [hashToken(newAccessToken()), hashToken(t)];
    expect(tokenMatches(t, hashes)).to.equal(true);
    for (const bad of ['', 'x', t + 'x', t.slice(0, -1), 'é'.repeat(10_000), `${t}, ${t}`]) {
      expect(tokenMatches(bad, hashes)).to.equal(false);
    }
    expect(tokenMatches(t, ['not-hex', ''])).to.equal(false);
  });
});
