/**
 * Creating an agreement, and version chains (esign reference, Version chain): a create with an
 * `(external_source, external_id)` already used makes the next version, points
 * `replaces_document_id` at the previous one, marks it `superseded_at` and cancels it when still
 * open (its signing links stop working). When the previous version had been sent, its sender
 * and recipients are copied and the new version sends itself once it has a PDF and participants.
 */

import type { CreateAgreement, ParticipantInput } from "./agreement-schemas.ts";
import { type EsignContext, isoNow, recordAudit } from "./esign-context.ts";
import type { Agreement, Participant } from "./esign-types.ts";
import { OPEN_STATUSES } from "./esign-types.ts";
import { acceptPersonalNumber } from "./personal-number.ts";
import { chainKey } from "./present-agreement.ts";

const DAY_MS = 86_400_000;

/** A new participant record from validated input. */
export async function newParticipant(
  input: ParticipantInput,
  agreement: Pick<Agreement, "eid_required" | "eid_identify_required" | "participants">,
): Promise<Participant> {
  return {
    id: crypto.randomUUID(),
    name: input.name,
    email: input.email,
    role: input.role,
    order: input.order ?? agreement.participants.length,
    job_title: input.job_title ?? null,
    phone: input.phone ?? null,
    personal_id_masked: input.personal_id_masked ?? null,
    notifications_enabled: input.notifications_enabled ?? true,
    status: "pending",
    viewed_at: null,
    signed_at: null,
    is_sender: false,
    personal_number_hash: await acceptPersonalNumber(input.signer_personal_number, agreement),
    signature: null,
    link_token: null,
  };
}

/** Creates the agreement (a new chain version when its external pair was used before). */
export async function createVersion(ctx: EsignContext, input: CreateAgreement, origin: string): Promise<Agreement> {
  const now = isoNow(ctx);
  const expiresAt =
    input.expires_at ??
    (input.expires_in_days ? new Date(ctx.scheduler.now() + input.expires_in_days * DAY_MS).toISOString() : null);
  const agreement: Agreement = {
    id: crypto.randomUUID(),
    status: "draft",
    title: input.title,
    message: input.message ?? null,
    expires_at: expiresAt ? new Date(expiresAt).toISOString() : null,
    external_id: input.external_id ?? null,
    external_source: input.external_source ?? null,
    external_url: input.external_url ?? null,
    metadata: input.metadata ?? null,
    version: 1,
    replaces_document_id: null,
    superseded_at: null,
    auto_reminders_enabled: input.auto_reminders?.enabled ?? true,
    reminder_interval_days: input.auto_reminders?.interval_days ?? 3,
    max_reminders: input.auto_reminders?.max_reminders ?? 3,
    // `callback_url` is the legacy synonym, used only when `webhook_url` is absent.
    webhook_url: input.webhook_url ?? input.callback_url ?? null,
    callback_url: input.callback_url ?? null,
    completed_copy_emails: input.completed_copy_emails ?? null,
    completed_delivery: input.completed_delivery ?? null,
    signed_pdf_url: null,
    signed_at: null,
    signed_sha256: null,
    created_at: now,
    updated_at: now,
    eid_required: input.eid_required ?? false,
    eid_identify_required: input.eid_identify_required ?? false,
    document_source: input.document_source ?? "sender",
    sender: input.sender ? { name: input.sender.name ?? null, email: input.sender.email } : null,
    participants: [],
    document: null,
    signed_document: null,
    auto_send: false,
    origin,
  };
  for (const item of input.participants ?? []) agreement.participants.push(await newParticipant(item, agreement));

  const key = chainKey(agreement);
  const chain = key ? (ctx.chains.get(key) ?? []).filter((id) => ctx.agreements.has(id)) : [];
  const previous = chain.length > 0 ? ctx.agreements.get(chain.at(-1) as string) : undefined;
  if (previous) supersede(ctx, previous, agreement);
  ctx.agreements.set(agreement.id, agreement);
  if (key) ctx.chains.set(key, [...chain, agreement.id]);
  recordAudit(ctx, agreement, "agreement.created", { version: agreement.version });
  return agreement;
}

function supersede(ctx: EsignContext, previous: Agreement, next: Agreement): void {
  next.version = previous.version + 1;
  next.replaces_document_id = previous.id;
  previous.superseded_at = isoNow(ctx);
  previous.updated_at = previous.superseded_at;
  const wasSent = previous.status === "sent" || previous.status === "partially_signed";
  if (OPEN_STATUSES.includes(previous.status)) {
    previous.status = "cancelled";
    for (const p of previous.participants) p.link_token = null;
  }
  recordAudit(ctx, previous, "agreement.superseded", { superseded_by: next.id });
  ctx.emit(previous, "agreement.superseded");
  if (!wasSent) return;
  next.sender ??= previous.sender;
  if (next.participants.length === 0) {
    next.participants = previous.participants
      .filter((p) => !p.is_sender && p.status !== "delegated")
      .map((p) => ({
        ...p,
        id: crypto.randomUUID(),
        status: "pending",
        viewed_at: null,
        signed_at: null,
        signature: null,
        link_token: null,
      }));
  }
  next.auto_send = true;
}
