/**
 * Simulated signing (issue 14; esign reference, States and transitions): after send, each
 * participant in signing order opens the link and, if a signer, signs, one step every
 * `signing.stepDelayMs` of emulated time (default 2 s, scaled by the time scale), driving
 * `agreement.viewed`, `agreement.signed` and finally `agreement.completed`. With
 * `signing.auto: false` nothing happens by itself: the control calls
 * `POST /_emulator/agreements/{id}/participants/{pid}/view|identify|sign|decline` and
 * `POST /_emulator/agreements/{id}/expire` drive the agreement instead.
 */
import { answer, param } from "../shared/emulator-frame.ts";
import { json, readJsonObject } from "../shared/http-answers.ts";
import { type EsignContext, findAgreement } from "./esign-context.ts";
import type { Agreement, Participant } from "./esign-types.ts";
import { presentAgreement } from "./present-agreement.ts";
import {
  declineAgreement,
  expireAgreement,
  findParticipant,
  identifyParticipant,
  signAgreement,
  viewAgreement,
} from "./transitions.ts";

const waiting = (p: Participant) => !p.is_sender && (p.status === "pending" || p.status === "viewed");
const open = (a: Agreement) => a.status === "sent" || a.status === "partially_signed";

/** Wires `ctx.startSigning` and adds the signing control calls. */
export function addSigningSimulation(ctx: EsignContext): void {
  const auto = ctx.options.signing?.auto ?? true;
  const stepMs = ctx.options.signing?.stepDelayMs ?? 2000;
  const scheduled = new Set<string>();

  /** Schedules the next step of the agreement's first waiting participant, once. */
  const next = (agreement: Agreement) => {
    if (!auto || scheduled.has(agreement.id) || !open(agreement)) return;
    const participant = [...agreement.participants].sort((a, b) => a.order - b.order).find(waiting);
    if (!participant) return;
    scheduled.add(agreement.id);
    ctx.scheduler.after(stepMs, `sign ${agreement.id}`, async () => {
      scheduled.delete(agreement.id);
      const current = ctx.agreements.get(agreement.id);
      if (!current || !open(current) || !waiting(participant)) return next(agreement);
      if (participant.status === "pending") viewAgreement(ctx, current, participant);
      else if (participant.role === "signer") await signAgreement(ctx, current, participant);
      else participant.status = "signed"; // a reviewer who has read it is done
      next(current);
    });
  };
  ctx.startSigning = next;

  const { app, control } = ctx.frame;
  const base = `${control}/agreements/:id`;
  const act = (run: (agreement: Agreement, participant: Participant, body: Record<string, unknown>) => unknown) =>
    answer(async (event) => {
      const agreement = findAgreement(ctx, param(event, "id"));
      const participant = findParticipant(agreement, param(event, "pid"));
      await run(agreement, participant, await readJsonObject(event.req));
      return json(200, presentAgreement(ctx, agreement));
    });
  app.post(
    `${base}/participants/:pid/view`,
    act((a, p) => viewAgreement(ctx, a, p)),
  );
  app.post(
    `${base}/participants/:pid/identify`,
    act((a, p) => identifyParticipant(ctx, a, p)),
  );
  app.post(
    `${base}/participants/:pid/sign`,
    act(async (a, p) => {
      if (p.status === "pending") viewAgreement(ctx, a, p);
      await signAgreement(ctx, a, p);
    }),
  );
  app.post(
    `${base}/participants/:pid/decline`,
    act((a, p, body) => declineAgreement(ctx, a, p, typeof body.reason === "string" ? body.reason : undefined)),
  );
  app.post(
    `${base}/expire`,
    answer(async (event) => {
      const agreement = findAgreement(ctx, param(event, "id"));
      expireAgreement(ctx, agreement);
      return json(200, presentAgreement(ctx, agreement));
    }),
  );
}
