// Message ids are dedup keys at the platforms: the same parts must give the same id in every
// version, or a retry after an upgrade would be counted twice.
import { expect } from 'chai';
import { messageId } from '../../src/destinations/message-id.ts';

describe('messageId', () => {
  const parts = { scriptId: 'SCRIPT01', eventName: 'checkout_completed', eventId: 'ORD-ü-1', destinationId: 'dst_0123456789abcdef', ruleId: 'ga4.purchase' };

  it('is the pinned value for fixed parts (SHA-256 of the NUL-ended parts, first 32 hex digits)', () => {
    expect(messageId(parts)).to.equal('msg_7d7cad60346a839580ac7cb7f0d74b3d');
  });

  it('differs when any part differs, and parts cannot run into each other', () => {
    const base = messageId(parts);
    for (const key of Object.keys(parts) as (keyof typeof parts)[]) expect(messageId({ ...parts, [key]: `${parts[key]}x` }), key).not.to.equal(base);
    expect(messageId({ ...parts, eventName: 'ab', eventId: 'c' })).not.to.equal(messageId({ ...parts, eventName: 'a', eventId: 'bc' }));
  });
});
