/**
 * The staffing emulator's options, records and shared state (staffing reference, Resources and
 * their fields): staffing requests with their calls and audit trail, kept in memory and bounded.
 */

import { INTENTS } from "../../src/services/staffing/staffing-webhook-schema.ts";
import { type BoundedMap, createBoundedMap, pushBounded } from "../shared/bounded-map.ts";
import type { EmulatorFrame } from "../shared/emulator-frame.ts";
import { fail } from "../shared/http-answers.ts";
import type { Scheduler } from "../shared/scheduler.ts";

export { INTENTS };

export type Intent = (typeof INTENTS)[number];

/** One scripted (or drawn) outcome of a call. */
export interface CallAnswer {
  /** `no_answer` when the phone rang out; otherwise the classified intent. */
  intent: Intent | "no_answer";
  confidence?: number;
  /** An acceptance of part of the shift (counts only with `allowPartial`). */
  partial?: boolean;
}

export interface StaffingEmulatorOptions {
  mountPath?: string;
  now?: () => number;
  /** Multiplier of simulated delays (calls, webhook retries). Default 1. */
  timeScale?: number;
  /** Run simulated activity on timers. Default false: `advance` drives it. */
  autoRun?: boolean;
  /** Sandbox API keys (prefix `sk_test_`). Default: one random key. */
  apiKeys?: string[];
  /** Origins allowed per key (default: all origins). */
  allowedOrigins?: Record<string, string[]>;
  /** Calls per minute per key. Default 60 (documented). */
  limitPerMinute?: number;
  /** The organization's webhook signing secret. Default: random. */
  webhookSecret?: string;
  /** Used when a request has no `webhookUrl` (the sandbox points it at the gateway). */
  defaultWebhookUrl?: string;
  /** Emulated ms before calling starts and between calls. Default 3000. */
  callDelayMs?: number;
  /** Seed of the random answers given to unscripted candidates. Default 1. */
  seed?: number;
  /** Scripted answers per candidate id, consumed in order. */
  script?: Record<string, CallAnswer[]>;
  /** Organization setting: transcripts are kept. Default true. */
  transcription?: boolean;
  fetch?: typeof fetch;
  /** Staffing requests kept. Default 1000. */
  maxRequests?: number;
}

export interface Candidate {
  id: string;
  name: string;
  phone: string;
  priority: number;
  allowedToWork: boolean;
  category?: string;
  hourlyRateOre?: number;
}

export interface Rules {
  requireManagerApproval: boolean;
  minConfidenceForAutoBook: number;
  stopWhenAccepted: boolean;
  maxAcceptedWorkers: number;
  maxAttemptsPerCandidate: number;
  callTimeoutSeconds: number;
  allowPartial: boolean;
}

export interface CallAttempt {
  id: string;
  candidateId: string;
  providerCallId: string;
  status: string;
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  summary: string;
  transcript?: string;
  intent: Intent | null;
  confidence: number | null;
}

export type StaffingStatus =
  | "queued"
  | "calling"
  | "candidate_accepted"
  | "candidate_declined"
  | "no_answer"
  | "requires_review"
  | "completed"
  | "failed"
  | "cancelled";

export interface StaffingRequest {
  id: string;
  apiKey: string;
  externalId: string;
  organizationId: string | null;
  mode: "cover" | "interest";
  shift: { id?: string; startTime: string; endTime: string; location: string; role: string; residentName?: string };
  candidates: Candidate[];
  rules: Rules;
  webhookUrl: string;
  status: StaffingStatus;
  result: Record<string, unknown> | null;
  calls: CallAttempt[];
  events: Record<string, unknown>[];
  attempts: Map<string, number>;
  /** Candidates whose answer was final (not to be called again in this request). */
  settled: Set<string>;
  accepted: { candidate: Candidate; confidence: number; partial: boolean }[];
  /** Bumped on cancel/retry so calls scheduled before are dropped. */
  generation: number;
  createdAt: string;
}

export interface StaffingContext {
  frame: EmulatorFrame;
  scheduler: Scheduler;
  options: StaffingEmulatorOptions;
  requests: BoundedMap<string, StaffingRequest>;
  /** `apiKey \n externalId` → request id. */
  byExternalId: Map<string, string>;
  /** Posts `event` about `request` (set by staffing-webhooks.ts). */
  emit(request: StaffingRequest, event: string, extra?: Record<string, unknown>): void;
  /** Starts or resumes calling (set by calling.ts). */
  startCalling(request: StaffingRequest): void;
}

/** Creates the shared state. */
export function createStaffingContext(frame: EmulatorFrame, scheduler: Scheduler, options: StaffingEmulatorOptions) {
  const ctx: StaffingContext = {
    frame,
    scheduler,
    options,
    requests: createBoundedMap(options.maxRequests ?? 1000, (_, request) => {
      ctx.byExternalId.delete(`${request.apiKey}\n${request.externalId}`);
    }),
    byExternalId: new Map(),
    emit: () => {},
    startCalling: () => {},
  };
  return ctx;
}

/** Emulated now as ISO 8601. */
export function isoNow(ctx: StaffingContext): string {
  return new Date(ctx.scheduler.now()).toISOString();
}

/** The caller's request `id`, or 404 `not_found`. */
export function findRequest(ctx: StaffingContext, apiKey: string, id: string): StaffingRequest {
  const request = ctx.requests.get(id);
  if (!request || request.apiKey !== apiKey) fail(404, "not_found", "the staffing request does not exist");
  return request;
}

/** Appends to the request's audit trail (`GET /staffing-requests/{id}/events`). */
export function audit(
  ctx: StaffingContext,
  request: StaffingRequest,
  type: string,
  data: Record<string, unknown> = {},
) {
  pushBounded(request.events, { id: crypto.randomUUID(), type, at: isoNow(ctx), ...data }, 500);
}

/** Moves the request to `status`, audits it and posts the transition's webhook. */
export function transition(
  ctx: StaffingContext,
  request: StaffingRequest,
  status: StaffingStatus,
  event: string,
  extra: Record<string, unknown> = {},
): void {
  const from = request.status;
  request.status = status;
  audit(ctx, request, "status_changed", { from, to: status });
  ctx.emit(request, event, extra);
}
