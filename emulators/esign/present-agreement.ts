/**
 * Public JSON of agreements and participants (esign reference, Agreement and Agreement party).
 * The party list is given under both names the reference uses: `parties` and `participants`.
 * `versions` appears only for an agreement in a chain; `signed_pdf_url` only after completion
 * and never under `secure_link`. Personal numbers and link tokens are never shown.
 */
import type { EsignContext } from "./esign-context.ts";
import type { Agreement, Participant } from "./esign-types.ts";

/** A participant as the API shows it. */
export function presentParticipant(p: Participant) {
  return {
    id: p.id,
    name: p.name,
    email: p.email,
    role: p.role,
    order: p.order,
    job_title: p.job_title,
    phone: p.phone,
    personal_id_masked: p.personal_id_masked,
    notifications_enabled: p.notifications_enabled,
    status: p.status,
    signed_at: p.signed_at,
    is_sender: p.is_sender,
  };
}

/** The version-chain summary of `agreement`, or null when it is not in a chain. */
export function chainVersions(ctx: EsignContext, agreement: Agreement) {
  const key = chainKey(agreement);
  const ids = key ? (ctx.chains.get(key) ?? []) : [];
  if (ids.length < 2) return null;
  const last = ids.at(-1);
  return ids.flatMap((id) => {
    const a = ctx.agreements.get(id);
    return a
      ? [{ id: a.id, version: a.version, status: a.status, created_at: a.created_at, is_current: id === last }]
      : [];
  });
}

/** The chain key of an agreement with both external fields, else undefined. */
export function chainKey(a: { external_source: string | null; external_id: string | null }): string | undefined {
  return a.external_source && a.external_id ? `${a.external_source}\n${a.external_id}` : undefined;
}

/** An agreement as the API shows it. */
export function presentAgreement(ctx: EsignContext, a: Agreement) {
  const parties = a.participants.map(presentParticipant);
  const versions = chainVersions(ctx, a);
  return {
    id: a.id,
    status: a.status,
    title: a.title,
    message: a.message,
    expires_at: a.expires_at,
    parties,
    participants: parties,
    external_id: a.external_id,
    external_source: a.external_source,
    external_url: a.external_url,
    metadata: a.metadata,
    version: a.version,
    replaces_document_id: a.replaces_document_id,
    superseded_at: a.superseded_at,
    ...(versions ? { versions } : {}),
    auto_reminders_enabled: a.auto_reminders_enabled,
    reminder_interval_days: a.reminder_interval_days,
    max_reminders: a.max_reminders,
    webhook_url: a.webhook_url,
    completed_copy_emails: a.completed_copy_emails,
    completed_delivery: a.completed_delivery,
    signed_pdf_url: a.completed_delivery === "secure_link" ? null : a.signed_pdf_url,
    signed_at: a.signed_at,
    signed_sha256: a.signed_sha256,
    eid_required: a.eid_required,
    eid_identify_required: a.eid_identify_required,
    document: { uploaded: a.document !== null, sha256: a.document?.sha256 ?? null },
    created_at: a.created_at,
    updated_at: a.updated_at,
  };
}
