// Claim ids are `${owner}#…` (src/delivery/owner-id.ts makes the owner ids): the store reads
// the owner part to tell a process's own leases from another's (the fan-out cursors' leases).

/** The owner part of a claim id: the process owner id, before '#'. */
export const ownerOf = (claimId: string): string => claimId.split('#')[0];
