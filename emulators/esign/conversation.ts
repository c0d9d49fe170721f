/**
 * Chat, comments and the audit trail of an agreement (esign reference, Comments and chat):
 * `GET/POST /agreements/{id}/chat` (a posted message triggers `agreement.chat_message`),
 * `GET/POST /agreements/{id}/comments` (`include_resolved`, default false),
 * `PATCH /agreements/{id}/comments/{commentId}` (`resolved`), and `GET /agreements/{id}/events`.
 * Record fields are not shown in the reference: these are the input fields plus `id`,
 * `agreement_id` and `created_at` (and `resolved`, `resolved_at` on comments).
 */

import { pushBounded } from "../shared/bounded-map.ts";
import { answer, param } from "../shared/emulator-frame.ts";
import { fail, json, readJsonObject } from "../shared/http-answers.ts";
import { parseOrFail } from "../shared/validation.ts";
import { ChatInput, CommentInput, ResolveComment } from "./agreement-schemas.ts";
import { type EsignContext, findAgreement, isoNow, recordAudit } from "./esign-context.ts";
import type { Guard } from "./tokens.ts";
import { findParticipant } from "./transitions.ts";

const MAX_PER_AGREEMENT = 1000;

/** Adds chat, comment and audit-trail routes. */
export function addConversationRoutes(ctx: EsignContext, guard: Guard): void {
  const { app, api } = ctx.frame;
  const base = `${api}/agreements/:id`;
  const listOf = (map: Map<string, Record<string, unknown>[]>, id: string) => {
    let list = map.get(id);
    if (!list) {
      list = [];
      map.set(id, list);
    }
    return list;
  };

  app.get(
    `${base}/chat`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      return json(200, { messages: ctx.chat.get(agreement.id) ?? [] });
    }),
  );
  app.post(
    `${base}/chat`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const input = parseOrFail(ChatInput, await readJsonObject(event.req), "chat message");
      const participant = input.participant_id ? findParticipant(agreement, input.participant_id) : undefined;
      const message = { id: crypto.randomUUID(), agreement_id: agreement.id, ...input, created_at: isoNow(ctx) };
      pushBounded(listOf(ctx.chat, agreement.id), message, MAX_PER_AGREEMENT);
      recordAudit(ctx, agreement, "chat.message", { message_id: message.id });
      ctx.emit(agreement, "agreement.chat_message", {
        participant: participant ? { id: participant.id, email: participant.email } : null,
      });
      return json(201, message);
    }),
  );

  app.get(
    `${base}/comments`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      const raw = event.url.searchParams.get("include_resolved");
      if (raw !== null && raw !== "true" && raw !== "false")
        fail(400, "invalid_request", "include_resolved: true or false");
      const all = ctx.comments.get(agreement.id) ?? [];
      return json(200, { comments: raw === "true" ? all : all.filter((c) => !c.resolved) });
    }),
  );
  app.post(
    `${base}/comments`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const input = parseOrFail(CommentInput, await readJsonObject(event.req), "comment");
      const participant = input.participant_id ? findParticipant(agreement, input.participant_id) : undefined;
      const comment = {
        id: crypto.randomUUID(),
        agreement_id: agreement.id,
        ...input,
        resolved: false,
        resolved_at: null,
        created_at: isoNow(ctx),
      };
      pushBounded(listOf(ctx.comments, agreement.id), comment, MAX_PER_AGREEMENT);
      recordAudit(ctx, agreement, "comment.created", { comment_id: comment.id });
      ctx.emit(agreement, "agreement.comment_created", {
        participant: participant ? { id: participant.id, email: participant.email } : null,
      });
      return json(201, comment);
    }),
  );
  app.patch(
    `${base}/comments/:commentId`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const comment = (ctx.comments.get(agreement.id) ?? []).find((c) => c.id === param(event, "commentId"));
      if (!comment) fail(404, "not_found", "comment not found");
      const { resolved } = parseOrFail(ResolveComment, await readJsonObject(event.req), "comment update");
      const changed = comment.resolved !== resolved;
      comment.resolved = resolved;
      comment.resolved_at = resolved ? isoNow(ctx) : null;
      if (changed && resolved) ctx.emit(agreement, "agreement.comment_resolved");
      return json(200, { ok: true });
    }),
  );

  app.get(
    `${base}/events`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      return json(200, { events: ctx.audit.get(agreement.id) ?? [] });
    }),
  );
}
