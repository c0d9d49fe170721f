/**
 * The e-sign emulator: an h3 app speaking the e-sign API v1 (esign reference) from memory, with
 * simulated signing and signed, retried webhooks on an injectable clock. `createEsignEmulator`
 * returns the app (serve it on any runtime) and handles for tests and the sandbox: clients,
 * tokens issued, request log and fault injection, the scheduler, webhook registration.
 * Control calls live under `/_emulator` (see common-control.ts and signing-simulation.ts).
 */
import type { H3 } from "h3";
import { addCommonControl } from "../shared/common-control.ts";
import { createEmulatorFrame, type EmulatorFrame } from "../shared/emulator-frame.ts";
import { randomSecret } from "../shared/hmac.ts";
import { json } from "../shared/http-answers.ts";
import { createScheduler, type Scheduler } from "../shared/scheduler.ts";
import { createWebhookSender, type WebhookSender } from "../shared/webhook-sender.ts";
import { createEsignContext, type EsignClient, type EsignEmulatorOptions, isoNow } from "./esign-context.ts";
import { addEsignRoutes } from "./esign-routes.ts";
import { DEFAULT_SCOPES } from "./tokens.ts";
import { createVersion } from "./version-chain.ts";
import { ESIGN_RETRY_DELAYS_MS } from "./webhooks.ts";

export type { EsignClient, EsignEmulatorOptions };

export interface EsignEmulator {
  app: H3;
  /** Route prefix of the API, relative to the server origin. */
  apiPath: string;
  /** Route prefix of the control calls (`{mountPath}/_emulator`). */
  controlPath: string;
  /** The first API client (credentials for the gateway's upstream config). */
  client: EsignClient;
  clients: EsignClient[];
  /** The client signing key used for per-agreement `webhook_url` deliveries. */
  signingSecret: string;
  scheduler: Scheduler;
  log: EmulatorFrame["log"];
  webhooks: WebhookSender;
  /** Token endpoint calls seen (answered or faulted). */
  tokenRequests(): number;
  /** Every access token issued so far (bounded), oldest first. */
  issued: string[];
  /** Makes every token issued so far invalid. */
  revokeAll(): void;
  /** Registers a webhook target with a known secret; every event unless `events` narrows it. */
  registerWebhook(url: string, secret: string, events?: string[]): void;
  /** Creates a draft directly (test setup); returns its id. */
  createAgreement(title?: string, externalId?: string | null): Promise<string>;
  /** SHA-256 (hex) of an agreement's main document, once hashed. */
  documentSha256(id: string): Promise<string | undefined>;
  /** Headers of the latest uploads, as received. */
  uploadHeaders: Record<string, string>[];
  /** Makes binary uploads wait (unread) until the returned function is called. */
  holdUploads(): () => void;
  /** Bytes of PDF downloads handed to the runtime so far. */
  downloadSent(): number;
  close(): void;
}

/** Creates the e-sign emulator; see the module comment and `EsignEmulatorOptions`. */
export function createEsignEmulator(options: EsignEmulatorOptions = {}): EsignEmulator {
  const frame = createEmulatorFrame({ mountPath: options.mountPath, serverErrorCode: "server_error" });
  const scheduler = createScheduler({ now: options.now, timeScale: options.timeScale, autoRun: options.autoRun });
  const resolved = { ...options, signingSecret: options.signingSecret ?? randomSecret("whsec_") };
  const ctx = createEsignContext(frame, scheduler, resolved);
  const clients: EsignClient[] = [
    ...(options.clients ?? [
      {
        clientId: `cid_${randomSecret("").slice(0, 16)}`,
        clientSecret: randomSecret("cs_"),
        scopes: DEFAULT_SCOPES,
        name: "Emulator client",
      },
    ]),
  ];
  const sender = createWebhookSender({ scheduler, retryDelaysMs: ESIGN_RETRY_DELAYS_MS, fetch: options.fetch });
  const { tokens, documents, webhooks } = addEsignRoutes(ctx, clients, sender);
  addCommonControl(frame, scheduler, sender);
  frame.app.get(`${frame.control}/state`, () =>
    json(200, {
      service: "esign",
      now: isoNow(ctx),
      token_requests: frame.log.count("POST", "/oauth/access-token"),
      tokens_issued: tokens.issued.length,
      agreements: ctx.agreements.size,
      webhook_deliveries: sender.deliveries().length,
    }),
  );

  return {
    app: frame.app,
    apiPath: frame.api,
    controlPath: frame.control,
    client: clients[0] as EsignClient,
    clients,
    signingSecret: resolved.signingSecret,
    scheduler,
    log: frame.log,
    webhooks: sender,
    tokenRequests: () => frame.log.count("POST", "/oauth/access-token"),
    issued: tokens.issued,
    revokeAll: tokens.revokeAll,
    registerWebhook: (url, secret, events) => {
      webhooks.register(url, secret, events);
    },
    async createAgreement(title = "Agreement", externalId = null) {
      const agreement = await createVersion(ctx, { title, external_id: externalId }, "http://emulator.invalid");
      return agreement.id;
    },
    documentSha256: async (id) => ctx.agreements.get(id)?.document?.hashed,
    uploadHeaders: documents.hooks.uploadHeaders,
    holdUploads: documents.holdUploads,
    downloadSent: () => documents.hooks.downloadSent,
    close() {
      scheduler.close();
      frame.close();
    },
  };
}
