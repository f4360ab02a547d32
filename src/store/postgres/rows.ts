// Row shapes PostgreSQL returns that more than one module reads, and their conversion.

export type { SeqEventRow as PgEventRow } from '../event-rows.ts';
export { toEventRecord as toPgEvent } from '../event-rows.ts';
