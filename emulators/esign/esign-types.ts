/**
 * The e-sign emulator's records (esign reference, "Resources and their fields"), as kept in
 * memory. Public JSON is built from them by present-agreement.ts.
 */

export type AgreementStatus =
  | "draft"
  | "sent"
  | "partially_signed"
  | "signed"
  | "completed"
  | "cancelled"
  | "declined"
  | "expired";

export type ParticipantStatus = "pending" | "viewed" | "signed" | "declined" | "delegated";

export interface SignatureRecord {
  method: "otp_email" | "eid";
  signer_name: string;
  email: string;
  code_verified_at: string | null;
  signed_at: string;
  ip: string;
  user_agent: string;
}

export interface Participant {
  id: string;
  name: string;
  email: string;
  role: "signer" | "reviewer";
  order: number;
  job_title: string | null;
  phone: string | null;
  personal_id_masked: string | null;
  notifications_enabled: boolean;
  status: ParticipantStatus;
  viewed_at: string | null;
  signed_at: string | null;
  is_sender: boolean;
  /** SHA-256 of the personal number: the number itself is never kept. */
  personal_number_hash: string | null;
  signature: SignatureRecord | null;
  /** Secret token of the signing link (`{sign_url}/<token>`), issued on send. */
  link_token: string | null;
}

export interface StoredDocument {
  bytes: Uint8Array;
  filename: string | null;
  /** Hex SHA-256, null until `hashed` settles (a large PDF is answered before it is hashed). */
  sha256: string | null;
  hashed: Promise<string>;
}

export interface Agreement {
  id: string;
  status: AgreementStatus;
  title: string;
  message: string | null;
  expires_at: string | null;
  external_id: string | null;
  external_source: string | null;
  external_url: string | null;
  metadata: Record<string, unknown> | null;
  version: number;
  replaces_document_id: string | null;
  superseded_at: string | null;
  auto_reminders_enabled: boolean;
  reminder_interval_days: number;
  max_reminders: number;
  webhook_url: string | null;
  callback_url: string | null;
  completed_copy_emails: string[] | null;
  completed_delivery: "email_attachment" | "secure_link" | null;
  signed_pdf_url: string | null;
  signed_at: string | null;
  signed_sha256: string | null;
  created_at: string;
  updated_at: string;
  eid_required: boolean;
  eid_identify_required: boolean;
  document_source: "sender" | "recipient";
  sender: { name: string | null; email: string } | null;
  participants: Participant[];
  document: StoredDocument | null;
  signed_document: Uint8Array | null;
  /** A new version of a sent agreement: sent by itself once it has a PDF and participants. */
  auto_send: boolean;
  /** Origin of the emulator as the creating request saw it (for absolute URLs in webhooks). */
  origin: string;
}

/** Statuses in which an agreement can still change (the reference's "open" agreements). */
export const OPEN_STATUSES: readonly AgreementStatus[] = ["draft", "sent", "partially_signed"];

/** Statuses named for PATCH rejection (deleted agreements no longer exist here). */
export const TERMINAL_STATUSES: readonly AgreementStatus[] = ["completed", "cancelled", "declined", "expired"];
