/**
 * The e-sign emulator's options and the state its resource modules share: agreements (bounded),
 * version chains, audit trails, chat and comments, and the hooks into the webhook and signing
 * modules. One context per emulator instance.
 */

import { type BoundedMap, createBoundedMap, pushBounded } from "../shared/bounded-map.ts";
import type { EmulatorFrame } from "../shared/emulator-frame.ts";
import { fail } from "../shared/http-answers.ts";
import type { Scheduler } from "../shared/scheduler.ts";
import type { Agreement } from "./esign-types.ts";

export interface EsignClient {
  clientId: string;
  clientSecret: string;
  scopes: string[];
  name?: string;
}

export interface EsignEmulatorOptions {
  /** Prefix of every route (two emulators on one port). Default "". */
  mountPath?: string;
  /** Epoch ms of the underlying clock. Default `Date.now`. */
  now?: () => number;
  /** Multiplier of simulated delays (signing steps, webhook retries). Default 1. */
  timeScale?: number;
  /** Run simulated activity on timers (a running emulator). Default false: `advance` drives it. */
  autoRun?: boolean;
  /** API clients. Default: one client with every agreement scope and `clients:manage`, random credentials. */
  clients?: EsignClient[];
  /** Access token lifetime. Default 3600 (documented). */
  tokenLifetimeSeconds?: number;
  /** Token endpoint calls per minute per IP. Default 10 (documented). */
  tokenLimitPerIp?: number;
  /** Token endpoint calls per minute per `client_id`. Default 30 (documented). */
  tokenLimitPerClient?: number;
  /** Calls per minute per client elsewhere. Default 60 (documented). */
  generalLimitPerClient?: number;
  /** Main-document uploads per hour per client. Default 600 (documented). */
  uploadLimitPerHour?: number;
  /** Simulated signing after send: each step (view, sign) after `stepDelayMs` of emulated time. */
  signing?: { auto?: boolean; stepDelayMs?: number };
  /** Account features. Default: no eid add-on, secure delivery not enforced. */
  account?: { eidAddon?: boolean; alwaysSecureDelivery?: boolean };
  /** The client signing key used for per-agreement `webhook_url` deliveries. Default: random. */
  signingSecret?: string;
  /** Webhooks registered at start (the sandbox registers the gateway this way). */
  webhooks?: { url: string; events?: string[]; secret?: string }[];
  /** Outgoing webhook `fetch`. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Agreements kept (oldest dropped beyond). Default 1000. */
  maxAgreements?: number;
  /** Largest main document. Default 128 MiB. */
  maxDocumentBytes?: number;
}

export interface EsignContext {
  frame: EmulatorFrame;
  scheduler: Scheduler;
  options: EsignEmulatorOptions;
  agreements: BoundedMap<string, Agreement>;
  /** `external_source \n external_id` → agreement ids, oldest version first. */
  chains: Map<string, string[]>;
  audit: Map<string, Record<string, unknown>[]>;
  chat: Map<string, Record<string, unknown>[]>;
  comments: Map<string, Record<string, unknown>[]>;
  /** Posts `event` about `agreement` to its webhook targets (set by webhooks.ts). */
  emit(agreement: Agreement, event: string, extra?: EmitExtra): void;
  /** Starts simulated signing of a sent agreement (set by signing-simulation.ts). */
  startSigning(agreement: Agreement): void;
}

export interface EmitExtra {
  participant?: { id: string; email: string } | null;
  signature?: Record<string, unknown>;
  identification?: Record<string, unknown>;
}

export const MAX_AUDIT_PER_AGREEMENT = 500;

/** Creates the shared state; `emit` and `startSigning` are wired by their modules. */
export function createEsignContext(frame: EmulatorFrame, scheduler: Scheduler, options: EsignEmulatorOptions) {
  const ctx: EsignContext = {
    frame,
    scheduler,
    options,
    agreements: createBoundedMap(options.maxAgreements ?? 1000, (id) => {
      ctx.audit.delete(id);
      ctx.chat.delete(id);
      ctx.comments.delete(id);
    }),
    chains: new Map(),
    audit: new Map(),
    chat: new Map(),
    comments: new Map(),
    emit: () => {},
    startSigning: () => {},
  };
  return ctx;
}

/** Emulated now as an ISO string. */
export function isoNow(ctx: EsignContext): string {
  return new Date(ctx.scheduler.now()).toISOString();
}

/** The agreement `id`, or 404 `not_found`. */
export function findAgreement(ctx: EsignContext, id: string): Agreement {
  const agreement = ctx.agreements.get(id);
  if (!agreement) fail(404, "not_found", "agreement not found");
  return agreement;
}

/** Appends an audit-trail entry (`GET /agreements/{id}/events`). */
export function recordAudit(ctx: EsignContext, agreement: Agreement, type: string, data: Record<string, unknown> = {}) {
  let trail = ctx.audit.get(agreement.id);
  if (!trail) {
    trail = [];
    ctx.audit.set(agreement.id, trail);
  }
  pushBounded(trail, { id: crypto.randomUUID(), type, created_at: isoNow(ctx), ...data }, MAX_AUDIT_PER_AGREEMENT);
}

/** Marks the agreement changed now. */
export function touch(ctx: EsignContext, agreement: Agreement): void {
  agreement.updated_at = isoNow(ctx);
}
