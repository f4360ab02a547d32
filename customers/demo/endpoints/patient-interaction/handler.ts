// patient-interaction: healthcare. Only SHA-256 digests of identifiers leave this handler;
// names, date of birth, phone and the free-text notes are never copied into an event or a
// record, so they are never stored, logged or sent. No health detail (what the visit was
// about) goes into the event either: advertising platforms must not receive health data.
import { createHash } from 'node:crypto';
import type { CustomHandler, StandardEventPayload } from 'tracklane/sdk';

export interface PatientInteractionBody {
  interaction_id: string;
  type: 'inquiry' | 'appointment_booked' | 'consultation_completed';
  occurred_at: string;
  channel?: 'website' | 'phone' | 'app' | 'admin';
  patient: { patient_id: string; email?: string; phone?: string; first_name?: string; last_name?: string; date_of_birth?: string };
  fee?: number;
  currency?: string;
  consent: { analytics: boolean; personalization: boolean; marketing: boolean };
  notes?: string;
}

const EVENT_NAMES = {
  inquiry: 'lead_created',
  appointment_booked: 'lead_qualified',
  consultation_completed: 'lead_closed',
} as const;

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** E-mail as every platform hashes it: trimmed and lowercased. */
export const hashEmail = (email: string): string => sha256(email.trim().toLowerCase());

/**
 * Patient and interaction ids are scoped to the account before hashing, so the same id at
 * two clinics gives two unrelated digests. Dedup still works: the digest is deterministic.
 */
export const hashId = (scriptId: string, kind: string, id: string): string => sha256(`${scriptId}:${kind}:${id}`);

const handler: CustomHandler<PatientInteractionBody> = (body, ctx) => {
  const scriptId = ctx.account.scriptId;
  const name = EVENT_NAMES[body.type];
  const user: Record<string, unknown> = { id: hashId(scriptId, 'patient', body.patient.patient_id) };
  // Phone is dropped, not hashed: platforms hash different strings (with or without the
  // "+"), so a digest made here would match on some and mislead on others.
  if (body.patient.email !== undefined) user.email = hashEmail(body.patient.email);

  const event: StandardEventPayload = {
    event: { name, id: hashId(scriptId, 'interaction', body.interaction_id) },
    context: { environment: 'prod', data_source: String(ctx.settings.data_source ?? 'crm') },
    user,
    consent: { ...body.consent },
  };
  if (body.type === 'consultation_completed' && body.fee !== undefined) {
    event.event.value = body.fee;
    event.event.currency = body.currency;
  }
  return {
    events: [event],
    messages: [`interaction ${body.interaction_id}: ${name}; identifiers hashed, notes dropped`],
    recordsProcessed: 1,
  };
};

export default handler;
