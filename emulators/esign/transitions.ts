/**
 * Agreement state changes (esign reference, States and transitions), shared by the API endpoints,
 * simulated signing and the control calls: send (sender auto-signed, signers get links), view,
 * identify, sign (partially_signed, then completed with the stamped PDF), decline, cancel and
 * expire, each recorded in the audit trail and posted as its webhook event.
 */

import { randomSecret, sha256Hex } from "../shared/hmac.ts";
import { fail } from "../shared/http-answers.ts";
import { type EsignContext, isoNow, recordAudit, touch } from "./esign-context.ts";
import type { Agreement, Participant, SignatureRecord } from "./esign-types.ts";

/** Where a simulated signer signs from: a documentation address (RFC 5737), never a real one. */
export const SIMULATED_SIGNER = { ip: "198.51.100.7", userAgent: "esign-emulator/1 (simulated signer)" };

/** Participants whose signature completes the agreement. */
export function requiredSigners(agreement: Agreement): Participant[] {
  return agreement.participants.filter((p) => p.role === "signer" && p.status !== "delegated");
}

const isOpenForSigning = (a: Agreement) => a.status === "sent" || a.status === "partially_signed";

/** draft → sent. Checks the documented send conditions first. */
export async function sendAgreement(
  ctx: EsignContext,
  agreement: Agreement,
  sender?: { name?: string; email: string },
): Promise<void> {
  if (agreement.status !== "draft") fail(409, "conflict", `agreement is ${agreement.status}, not draft`);
  const eidAddon = ctx.options.account?.eidAddon ?? false;
  if (agreement.eid_required && !eidAddon) fail(402, "eid_disabled", "eid_required needs the eid add-on");
  if (agreement.completed_delivery === "secure_link") {
    if (!eidAddon) fail(402, "eid_disabled", "secure_link delivery needs the eid add-on");
    const untied = requiredSigners(agreement).filter((p) => !agreement.eid_required && !p.personal_number_hash);
    if (untied.length > 0) {
      fail(400, "personal_number_required_for_secure_delivery", "every signer must be tied to a personal number", {
        participant_ids: untied.map((p) => p.id),
      });
    }
  }
  if (agreement.document_source === "recipient" && agreement.participants.filter((p) => !p.is_sender).length !== 1) {
    fail(400, "invalid_request", "document_source recipient requires exactly 1 recipient");
  }
  if (agreement.document_source === "sender" && !agreement.document) {
    fail(409, "conflict", "upload the main document before sending", { reason: "document_missing" });
  }
  if (requiredSigners(agreement).filter((p) => !p.is_sender).length === 0) {
    fail(409, "conflict", "add at least one signer before sending", { reason: "no_signers" });
  }
  const now = isoNow(ctx);
  // The body's sender wins over the draft's sender.
  const who = sender ? { name: sender.name ?? null, email: sender.email } : agreement.sender;
  if (who) {
    agreement.sender = who;
    const signature: SignatureRecord = {
      method: "otp_email",
      signer_name: who.name ?? who.email,
      email: who.email,
      code_verified_at: null,
      signed_at: now,
      ip: SIMULATED_SIGNER.ip,
      user_agent: SIMULATED_SIGNER.userAgent,
    };
    agreement.participants.push({
      id: crypto.randomUUID(),
      name: who.name ?? who.email,
      email: who.email,
      role: "signer",
      order: 0,
      job_title: null,
      phone: null,
      personal_id_masked: null,
      notifications_enabled: false,
      status: "signed",
      viewed_at: now,
      signed_at: now,
      is_sender: true,
      personal_number_hash: null,
      signature,
      link_token: null,
    });
  }
  for (const p of agreement.participants) if (!p.is_sender) p.link_token = randomSecret("sl_");
  agreement.status = "sent";
  agreement.auto_send = false;
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "agreement.sent", { sender: who?.email ?? null });
  ctx.emit(agreement, "agreement.sent");
  if (agreement.expires_at) {
    const id = agreement.id;
    ctx.scheduler.at(Date.parse(agreement.expires_at), `expire ${id}`, () => {
      const current = ctx.agreements.get(id);
      if (current && isOpenForSigning(current)) expireAgreement(ctx, current);
    });
  }
  ctx.startSigning(agreement);
}

/** The participant `pid` of `agreement`, or 404 `not_found`. */
export function findParticipant(agreement: Agreement, pid: string): Participant {
  const participant = agreement.participants.find((p) => p.id === pid);
  if (!participant) fail(404, "not_found", "participant not found");
  return participant;
}

function requireActionable(agreement: Agreement, participant: Participant, action: string): void {
  if (!isOpenForSigning(agreement)) fail(409, "conflict", `cannot ${action}: agreement is ${agreement.status}`);
  if (participant.status !== "pending" && participant.status !== "viewed") {
    fail(409, "conflict", `cannot ${action}: participant is ${participant.status}`);
  }
}

const ref = (p: Participant) => ({ id: p.id, email: p.email });

/** The participant opened the link (after identification when `eid_identify_required`). */
export function viewAgreement(ctx: EsignContext, agreement: Agreement, participant: Participant): void {
  requireActionable(agreement, participant, "view");
  if (agreement.eid_identify_required) identifyParticipant(ctx, agreement, participant);
  if (participant.status === "viewed") return;
  participant.status = "viewed";
  participant.viewed_at = isoNow(ctx);
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "participant.viewed", { participant_id: participant.id });
  ctx.emit(agreement, "agreement.viewed", { participant: ref(participant) });
}

/** The participant identified with the electronic ID. */
export function identifyParticipant(ctx: EsignContext, agreement: Agreement, participant: Participant): void {
  requireActionable(agreement, participant, "identify");
  const identification = { method: "eid", signer_name: participant.name, identified_at: isoNow(ctx) };
  recordAudit(ctx, agreement, "participant.identified", { participant_id: participant.id });
  ctx.emit(agreement, "agreement.identified", { participant: ref(participant), identification });
}

/** The participant signs; the last required signature completes the agreement. */
export async function signAgreement(ctx: EsignContext, agreement: Agreement, participant: Participant): Promise<void> {
  requireActionable(agreement, participant, "sign");
  if (participant.role !== "signer") fail(409, "conflict", "reviewers do not sign");
  const now = isoNow(ctx);
  participant.status = "signed";
  participant.signed_at = now;
  participant.viewed_at ??= now;
  participant.signature = agreement.eid_required
    ? {
        method: "eid",
        signer_name: participant.name,
        email: participant.email,
        code_verified_at: null,
        signed_at: now,
        ip: "",
        user_agent: "",
      }
    : {
        method: "otp_email",
        signer_name: participant.name,
        email: participant.email,
        code_verified_at: now,
        signed_at: now,
        ip: SIMULATED_SIGNER.ip,
        user_agent: SIMULATED_SIGNER.userAgent,
      };
  const done = requiredSigners(agreement).every((p) => p.status === "signed");
  agreement.status = done ? "completed" : "partially_signed";
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "participant.signed", {
    participant_id: participant.id,
    method: participant.signature.method,
  });
  ctx.emit(agreement, "agreement.signed", {
    participant: ref(participant),
    signature: signatureBlock(participant.signature),
  });
  if (done) await completeAgreement(ctx, agreement);
}

/** The documented `signature` block: `eid` carries only method, signer_name, signed_at. */
export function signatureBlock(s: SignatureRecord): Record<string, unknown> {
  if (s.method === "eid") return { method: "eid", signer_name: s.signer_name, signed_at: s.signed_at };
  return { ...s };
}

async function completeAgreement(ctx: EsignContext, agreement: Agreement): Promise<void> {
  const stamp = new TextEncoder().encode(
    `\n% Signed through the e-sign emulator on ${isoNow(ctx)} by ${requiredSigners(agreement)
      .map((p) => p.email)
      .join(", ")}\n%%EOF\n`,
  );
  const original = agreement.document?.bytes ?? new Uint8Array();
  const stamped = new Uint8Array(original.byteLength + stamp.byteLength);
  stamped.set(original);
  stamped.set(stamp, original.byteLength);
  agreement.signed_document = stamped;
  agreement.signed_sha256 = await sha256Hex(stamped);
  agreement.signed_at = isoNow(ctx);
  agreement.signed_pdf_url = agreement.completed_delivery === "secure_link" ? null : issueSignedPdfUrl(ctx, agreement);
  for (const p of agreement.participants) p.link_token = null;
  recordAudit(ctx, agreement, "agreement.completed", { signed_sha256: agreement.signed_sha256 });
  ctx.emit(agreement, "agreement.completed");
}

/** A participant declines: the agreement becomes declined. */
export function declineAgreement(ctx: EsignContext, agreement: Agreement, participant: Participant, reason?: string) {
  requireActionable(agreement, participant, "decline");
  participant.status = "declined";
  agreement.status = "declined";
  for (const p of agreement.participants) p.link_token = null;
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "participant.declined", { participant_id: participant.id, reason: reason ?? null });
  ctx.emit(agreement, "agreement.declined", { participant: ref(participant) });
}

/** draft, sent or partially_signed → cancelled. */
export function cancelAgreement(ctx: EsignContext, agreement: Agreement): void {
  if (agreement.status !== "draft" && !isOpenForSigning(agreement)) {
    fail(409, "conflict", `cannot cancel: agreement is ${agreement.status}`);
  }
  agreement.status = "cancelled";
  for (const p of agreement.participants) p.link_token = null;
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "agreement.cancelled");
  ctx.emit(agreement, "agreement.cancelled");
}

/** sent or partially_signed → expired (its `expires_at` passed, or a control call). */
export function expireAgreement(ctx: EsignContext, agreement: Agreement): void {
  if (!isOpenForSigning(agreement)) fail(409, "conflict", `cannot expire: agreement is ${agreement.status}`);
  agreement.status = "expired";
  for (const p of agreement.participants) p.link_token = null;
  touch(ctx, agreement);
  recordAudit(ctx, agreement, "agreement.expired");
  ctx.emit(agreement, "agreement.expired");
}

/** Signed-PDF download tokens: short-lived (3600 s) unauthenticated URLs. */
export const signedPdfLinks = new WeakMap<EsignContext, Map<string, { agreementId: string; expiresAt: number }>>();

/** A fresh short-lived URL of the stamped PDF. */
export function issueSignedPdfUrl(ctx: EsignContext, agreement: Agreement): string {
  let links = signedPdfLinks.get(ctx);
  if (!links) {
    links = new Map();
    signedPdfLinks.set(ctx, links);
  }
  const now = ctx.scheduler.now();
  for (const [token, link] of links) if (link.expiresAt <= now) links.delete(token);
  const token = randomSecret("pdf_");
  links.set(token, { agreementId: agreement.id, expiresAt: now + 3600_000 });
  return `${agreement.origin}${ctx.frame.control.replace(/_emulator$/, "files")}/signed/${token}.pdf`;
}
