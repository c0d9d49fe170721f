/**
 * Valibot schemas of the e-sign request bodies, field by field from the reference's tables
 * (POST /agreements, PATCH /agreements/{id}, participants, lifecycle, decline, delegate,
 * notifications, chat, comments, webhooks, clients). Unknown fields are ignored.
 */
import * as v from "valibot";
import { dateTime, email, httpUrl, text } from "../shared/validation.ts";

const Sender = v.object({ name: v.optional(text(1, 255)), email: email(255) });

const AutoReminders = v.object({
  enabled: v.optional(v.boolean()),
  interval_days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30))),
  max_reminders: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(20))),
});

/** POST /agreements/{id}/participants (and the items of `participants` on creation). */
export const ParticipantInput = v.object({
  name: text(1, 200),
  email: email(255),
  role: v.optional(v.picklist(["signer", "reviewer"]), "signer"),
  order: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100))),
  job_title: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
  phone: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(40)))),
  personal_id_masked: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(40)))),
  notifications_enabled: v.optional(v.boolean()),
  signer_personal_number: v.optional(v.string()),
});
export type ParticipantInput = v.InferOutput<typeof ParticipantInput>;

export const CreateAgreement = v.object({
  title: text(1, 255),
  message: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  expires_at: v.optional(v.nullable(dateTime())),
  expires_in_days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650))),
  callback_url: v.optional(v.nullable(httpUrl(500))),
  webhook_url: v.optional(v.nullable(httpUrl(500))),
  metadata: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  eid_required: v.optional(v.boolean()),
  eid_identify_required: v.optional(v.boolean()),
  document_source: v.optional(v.picklist(["sender", "recipient"])),
  external_id: v.optional(v.nullable(text(1, 255))),
  external_source: v.optional(v.nullable(v.pipe(text(1, 64), v.regex(/^[a-z0-9_-]+$/, "must match ^[a-z0-9_-]+$")))),
  external_url: v.optional(v.nullable(httpUrl(1000))),
  completed_delivery: v.optional(v.nullable(v.picklist(["email_attachment", "secure_link"]))),
  completed_copy_recipients: v.optional(v.pipe(v.array(v.record(v.string(), v.unknown())), v.maxLength(5))),
  completed_copy_emails: v.optional(v.nullable(v.pipe(v.array(email(255)), v.maxLength(5)))),
  sender: v.optional(v.nullable(Sender)),
  auto_reminders: v.optional(AutoReminders),
  participants: v.optional(v.pipe(v.array(ParticipantInput), v.maxLength(100))),
});
export type CreateAgreement = v.InferOutput<typeof CreateAgreement>;

export const PatchAgreement = v.object({
  title: v.optional(text(1, 255)),
  message: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  callback_url: v.optional(v.nullable(httpUrl(500))),
  external_url: v.optional(v.nullable(httpUrl(1000))),
  metadata: v.optional(v.record(v.string(), v.unknown())),
  sender: v.optional(v.nullable(Sender)),
  auto_reminders: v.optional(AutoReminders),
  eid_required: v.optional(v.boolean()),
  eid_identify_required: v.optional(v.boolean()),
});

export const ListQuery = v.object({
  external_id: v.optional(v.string()),
  external_source: v.optional(v.string()),
  status: v.optional(
    v.picklist(["draft", "sent", "partially_signed", "completed", "cancelled", "declined", "expired"]),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, "must be an integer 1 to 200"),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(200),
    ),
  ),
  group: v.optional(v.picklist(["latest", "all"])),
  cursor: v.optional(v.string()),
});

export const Lifecycle = v.variant("action", [
  v.object({ action: v.literal("send"), sender: v.optional(Sender) }),
  v.object({ action: v.literal("cancel") }),
]);

export const Decline = v.object({ reason: v.optional(v.pipe(v.string(), v.maxLength(500))) });

export const Delegate = v.object({
  name: text(1, 200),
  email: email(255),
  reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
  job_title: v.optional(v.pipe(v.string(), v.maxLength(200))),
  phone: v.optional(v.pipe(v.string(), v.maxLength(40))),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000))),
});

export const Notifications = v.object({ enabled: v.boolean() });

export const DocumentJson = v.object({ filename: text(1, 255), content_base64: v.string() });

export const ChatInput = v.object({
  body: text(1, 4000),
  sender_label: v.optional(v.pipe(v.string(), v.maxLength(200))),
  sender_email: v.optional(email(255)),
  participant_id: v.optional(v.pipe(v.string(), v.uuid())),
});

export const CommentInput = v.object({
  body: text(1, 4000),
  page: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2000))),
  anchor_x: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  anchor_y: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  author_label: v.optional(v.pipe(v.string(), v.maxLength(200))),
  author_email: v.optional(email(255)),
  participant_id: v.optional(v.pipe(v.string(), v.uuid())),
});

export const ResolveComment = v.object({ resolved: v.boolean() });
