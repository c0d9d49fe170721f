/**
 * Participants and lifecycle (esign reference, Endpoints > Agreements): add (on a draft without a
 * link; on a sent agreement with a link at once), decline (the agreement becomes declined),
 * delegate (a new participant for the delegate), notifications on/off, and
 * `POST /agreements/{id}/lifecycle` with `send` (scope agreements:send) or `cancel`
 * (agreements:cancel).
 */
import * as v from "valibot";
import { answer, param } from "../shared/emulator-frame.ts";
import { randomSecret } from "../shared/hmac.ts";
import { fail, json, readJsonObject } from "../shared/http-answers.ts";
import { parseOrFail } from "../shared/validation.ts";
import { Decline, Delegate, Lifecycle, Notifications, ParticipantInput } from "./agreement-schemas.ts";
import { type EsignContext, findAgreement, recordAudit, touch } from "./esign-context.ts";
import { presentParticipant } from "./present-agreement.ts";
import type { Guard } from "./tokens.ts";
import { cancelAgreement, declineAgreement, findParticipant, sendAgreement } from "./transitions.ts";
import { newParticipant } from "./version-chain.ts";

/** Adds the participant and lifecycle routes. */
export function addParticipantRoutes(ctx: EsignContext, guard: Guard): void {
  const { app, api } = ctx.frame;
  const base = `${api}/agreements/:id`;

  app.post(
    `${base}/participants`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const input = parseOrFail(ParticipantInput, await readJsonObject(event.req), "participant");
      const live = agreement.status === "sent" || agreement.status === "partially_signed";
      if (agreement.status !== "draft" && !live)
        fail(409, "conflict", `cannot add participants: agreement is ${agreement.status}`);
      if (agreement.participants.length >= 100) fail(400, "invalid_request", "at most 100 participants");
      const participant = await newParticipant(input, agreement);
      if (live) participant.link_token = randomSecret("sl_");
      agreement.participants.push(participant);
      touch(ctx, agreement);
      recordAudit(ctx, agreement, "participant.added", { participant_id: participant.id });
      if (live) {
        ctx.startSigning(agreement);
      }
      // A new version whose PDF already exists sends itself on its first participant.
      if (agreement.auto_send && agreement.document) await sendAgreement(ctx, agreement);
      return json(201, presentParticipant(participant));
    }),
  );

  app.post(
    `${base}/participants/:pid/decline`,
    answer(async (event) => {
      await guard(event, "agreements:cancel");
      const agreement = findAgreement(ctx, param(event, "id"));
      const participant = findParticipant(agreement, param(event, "pid"));
      const { reason } = parseOrFail(Decline, await readJsonObject(event.req), "decline");
      declineAgreement(ctx, agreement, participant, reason);
      return json(200, { ok: true });
    }),
  );

  app.post(
    `${base}/participants/:pid/delegate`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const participant = findParticipant(agreement, param(event, "pid"));
      const input = parseOrFail(Delegate, await readJsonObject(event.req), "delegation");
      const open = ["draft", "sent", "partially_signed"].includes(agreement.status);
      if (!open) fail(409, "conflict", `cannot delegate: agreement is ${agreement.status}`);
      if (participant.status !== "pending" && participant.status !== "viewed") {
        fail(409, "conflict", `cannot delegate: participant is ${participant.status}`);
      }
      participant.status = "delegated";
      participant.link_token = null;
      const delegate = await newParticipant(
        {
          name: input.name,
          email: input.email,
          role: participant.role,
          order: participant.order,
          job_title: input.job_title,
          phone: input.phone,
        },
        agreement,
      );
      if (agreement.status !== "draft") delegate.link_token = randomSecret("sl_");
      agreement.participants.push(delegate);
      touch(ctx, agreement);
      recordAudit(ctx, agreement, "participant.delegated", {
        participant_id: participant.id,
        delegate_id: delegate.id,
        reason: input.reason ?? null,
      });
      ctx.emit(agreement, "agreement.delegated", { participant: { id: participant.id, email: participant.email } });
      if (agreement.status !== "draft") ctx.startSigning(agreement);
      return json(200, { ok: true });
    }),
  );

  app.patch(
    `${base}/participants/:pid/notifications`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const participant = findParticipant(agreement, param(event, "pid"));
      const { enabled } = parseOrFail(Notifications, await readJsonObject(event.req), "notifications");
      participant.notifications_enabled = enabled;
      touch(ctx, agreement);
      recordAudit(ctx, agreement, "participant.notifications_changed", { participant_id: participant.id, enabled });
      ctx.emit(agreement, "participant.notifications_changed", {
        participant: { id: participant.id, email: participant.email },
      });
      return json(200, { ok: true });
    }),
  );

  app.post(
    `${base}/lifecycle`,
    answer(async (event) => {
      const body = await readJsonObject(event.req);
      const action = v.safeParse(v.object({ action: v.picklist(["send", "cancel"]) }), body);
      // The scope depends on the action, so an invalid action is refused before authorization.
      const caller = await guard(
        event,
        action.success && action.output.action === "cancel" ? "agreements:cancel" : "agreements:send",
      );
      const input = parseOrFail(Lifecycle, body, "lifecycle");
      void caller;
      const agreement = findAgreement(ctx, param(event, "id"));
      if (input.action === "send") await sendAgreement(ctx, agreement, input.sender);
      else cancelAgreement(ctx, agreement);
      return json(200, { ok: true, status: agreement.status });
    }),
  );
}
