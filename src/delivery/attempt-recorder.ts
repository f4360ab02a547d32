// Group commit for attempt results: every result that arrives in the same event-loop turn
// is written in one transaction, so many concurrent sends cost one commit, not one each.
import { createGroupCommit } from '../store/group-commit.ts';
import type { DeliveryStore, AttemptRecord, RecordResult } from './types.ts';

export interface AttemptRecorder {
  /** Resolves once the attempt and its delivery updates are committed. */
  record(rec: AttemptRecord): Promise<RecordResult>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
}

export function createAttemptRecorder(store: Pick<DeliveryStore, 'recordAttempts'>, maxBatch = 256): AttemptRecorder {
  const group = createGroupCommit((records: AttemptRecord[]) => store.recordAttempts(records), { maxBatch });
  return { record: group.submit, drain: group.drain };
}
