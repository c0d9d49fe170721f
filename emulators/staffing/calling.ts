/**
 * Simulated calling (staffing reference, States and transitions and Rules): after `callDelayMs`
 * the request starts `calling`; candidates allowed to work are phoned in priority order, one call
 * every `callDelayMs`, up to `maxAttemptsPerCandidate` each. Each answer drives the documented
 * transitions and webhooks: `candidate.responded` for every answer, `candidate.accepted` /
 * `candidate.declined` / `candidate.no_answer`, then `staffing.completed` when
 * `requireManagerApproval` is off and the confidence reaches `minConfidenceForAutoBook`, else
 * `staffing.requires_review`; `stopWhenAccepted`, `maxAcceptedWorkers` and `allowPartial` decide
 * whether calling goes on. An exhausted list without acceptance is `staffing.failed`.
 */
import { createCallAnswers, PHRASES } from "./call-answers.ts";
import {
  audit,
  type CallAnswer,
  type CallAttempt,
  type Candidate,
  type StaffingContext,
  type StaffingRequest,
  transition,
} from "./staffing-context.ts";

const RUNNING = new Set(["queued", "calling", "candidate_accepted", "candidate_declined", "no_answer"]);
/** Intents after which the candidate may be called again (attempts permitting). */
const CALL_AGAIN = new Set(["maybe", "asked_question", "needs_callback", "unclear"]);

const ref = (c: Candidate) => ({ id: c.id, name: c.name, phone: c.phone });

/** Wires `ctx.startCalling`; returns the answer source (for the scripts control call). */
export function addCalling(ctx: StaffingContext) {
  const answers = createCallAnswers(ctx.options.seed ?? 1, ctx.options.script);
  const delay = ctx.options.callDelayMs ?? 3000;

  const filled = (r: StaffingRequest) => r.accepted.reduce((n, a) => n + (a.partial ? 0.5 : 1), 0);

  const nextCandidate = (r: StaffingRequest) =>
    r.candidates.find(
      (c) => c.allowedToWork && !r.settled.has(c.id) && (r.attempts.get(c.id) ?? 0) < r.rules.maxAttemptsPerCandidate,
    );

  /** Schedules the next call of `r` (or finishes it), in the current generation only. */
  const scheduleNext = (r: StaffingRequest) => {
    const generation = r.generation;
    ctx.scheduler.after(delay, `call ${r.id}`, async () => {
      if (r.generation !== generation || !RUNNING.has(r.status)) return;
      const candidate = nextCandidate(r);
      if (!candidate) return finish(r);
      placeCall(r, candidate);
    });
  };

  const placeCall = (r: StaffingRequest, candidate: Candidate) => {
    const answer = answers.next(candidate.id);
    const attempt = (r.attempts.get(candidate.id) ?? 0) + 1;
    r.attempts.set(candidate.id, attempt);
    const call = record(r, candidate, answer);
    if (answer.intent === "no_answer") {
      if (attempt >= r.rules.maxAttemptsPerCandidate) r.settled.add(candidate.id);
      if (!nextCandidate(r)) {
        ctx.emit(r, "candidate.no_answer", { candidate: ref(candidate), attempt });
        return finish(r);
      }
      transition(ctx, r, "no_answer", "candidate.no_answer", { candidate: ref(candidate), attempt });
      return scheduleNext(r);
    }
    const intent = answer.intent;
    ctx.emit(r, "candidate.responded", {
      externalCandidateId: candidate.id,
      candidate: ref(candidate),
      intent,
      confidence: answer.confidence,
      transcript: call.transcript ?? null,
      note: call.summary,
      recordingUrl: null,
      answeredAt: call.endedAt,
    });
    if (intent === "accepted") return accept(r, candidate, answer);
    if (intent === "angry_or_sensitive") {
      r.settled.add(candidate.id);
      r.result = result("escalated", candidate, answer.confidence);
      return transition(ctx, r, "requires_review", "staffing.requires_review", { reason: "angry_or_sensitive" });
    }
    if (intent === "declined" || intent === "wrong_person" || !CALL_AGAIN.has(intent)) {
      r.settled.add(candidate.id);
      if (intent === "declined")
        transition(ctx, r, "candidate_declined", "candidate.declined", { candidate: ref(candidate) });
    }
    scheduleNext(r);
  };

  const accept = (r: StaffingRequest, candidate: Candidate, answer: CallAnswer & { confidence: number }) => {
    r.settled.add(candidate.id);
    const partial = answer.partial === true;
    if (partial && !r.rules.allowPartial) {
      // A partial yes where partial acceptance is off counts as a no.
      transition(ctx, r, "candidate_declined", "candidate.declined", { candidate: ref(candidate), partial: true });
      return scheduleNext(r);
    }
    r.accepted.push({ candidate, confidence: answer.confidence, partial });
    const review =
      r.mode === "interest"
        ? false
        : r.rules.requireManagerApproval || answer.confidence < r.rules.minConfidenceForAutoBook;
    r.result = result(
      r.mode === "interest" ? "interest_collected" : "candidate_accepted",
      candidate,
      answer.confidence,
      review,
    );
    transition(ctx, r, "candidate_accepted", "candidate.accepted", {
      candidate: ref(candidate),
      result: {
        answer: PHRASES.accepted,
        confidence: answer.confidence,
        requiresReview: review,
        summary: summaryOf("accepted", partial),
      },
    });
    if (review)
      return transition(ctx, r, "requires_review", "staffing.requires_review", { reason: "approval_or_confidence" });
    const done = filled(r) >= r.rules.maxAcceptedWorkers;
    if (r.mode === "cover" && done && r.rules.stopWhenAccepted)
      return transition(ctx, r, "completed", "staffing.completed");
    scheduleNext(r);
  };

  /** The list is exhausted (or nobody is left to call). */
  const finish = (r: StaffingRequest, extra: Record<string, unknown> = {}) => {
    if (r.accepted.length === 0) {
      r.result = { outcome: "no_candidate", selectedCandidate: null, confidence: null, requiresManagerApproval: false };
      return transition(ctx, r, "failed", "staffing.failed", { reason: "candidates_exhausted", ...extra });
    }
    if (r.mode === "interest" || filled(r) >= r.rules.maxAcceptedWorkers)
      return transition(ctx, r, "completed", "staffing.completed");
    // Some positions filled, the list is exhausted: a human decides.
    r.result = { ...r.result, outcome: "partially_filled", requiresManagerApproval: true };
    transition(ctx, r, "requires_review", "staffing.requires_review", { reason: "partially_filled" });
  };

  const record = (
    r: StaffingRequest,
    candidate: Candidate,
    answer: CallAnswer & { confidence: number },
  ): CallAttempt => {
    const noAnswer = answer.intent === "no_answer";
    const duration = noAnswer ? r.rules.callTimeoutSeconds : 20 + Math.round(answer.confidence * 20);
    const ended = ctx.scheduler.now();
    const call: CallAttempt = {
      id: crypto.randomUUID(),
      candidateId: candidate.id,
      providerCallId: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`,
      status: noAnswer ? "no_answer" : answer.intent,
      startedAt: new Date(ended - duration * 1000).toISOString(),
      endedAt: new Date(ended).toISOString(),
      durationSeconds: duration,
      summary: summaryOf(answer.intent, answer.partial === true),
      intent: noAnswer ? null : (answer.intent as CallAttempt["intent"]),
      confidence: noAnswer ? null : answer.confidence,
      ...(!noAnswer && (ctx.options.transcription ?? true)
        ? { transcript: PHRASES[answer.intent as keyof typeof PHRASES] }
        : {}),
    };
    r.calls.push(call);
    audit(ctx, r, "call", { callId: call.id, candidateId: candidate.id, status: call.status });
    return call;
  };

  ctx.startCalling = (r) => {
    const generation = r.generation;
    ctx.scheduler.after(delay, `start ${r.id}`, () => {
      if (r.generation !== generation || !RUNNING.has(r.status)) return;
      if (!r.candidates.some((c) => c.allowedToWork)) return finish(r, { reason: "no_candidate_available" });
      transition(ctx, r, "calling", "staffing.calling");
      const candidate = nextCandidate(r);
      if (!candidate) return finish(r);
      placeCall(r, candidate);
    });
  };

  return {
    answers,
    /** A manual decision on a request waiting in `requires_review`. */
    review(r: StaffingRequest, approve: boolean) {
      if (approve) {
        r.result = { ...r.result, requiresManagerApproval: false };
        return transition(ctx, r, "completed", "staffing.completed", { decision: "approved" });
      }
      // Rejected: the last acceptance is dropped and calling goes on with the next candidate.
      r.accepted.pop();
      r.generation++;
      transition(ctx, r, "calling", "staffing.calling", { decision: "rejected" });
      scheduleNext(r);
    },
  };
}

function summaryOf(intent: CallAnswer["intent"], partial: boolean): string {
  if (intent === "no_answer") return "No answer.";
  if (intent === "accepted") return partial ? "Accepted part of the shift." : "Accepted the shift.";
  return `Answer classified as ${intent.replaceAll("_", " ")}.`;
}

function result(outcome: string, c: Candidate, confidence: number, review = true) {
  return { outcome, selectedCandidate: ref(c), confidence, requiresManagerApproval: review };
}
