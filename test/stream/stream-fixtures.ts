/**
 * Fixtures of the live-stream tests: a real gateway process configured with stream clients
 * (API keys and an HS256 secret), two stream destinations and routes, plus WebSocket and SSE
 * clients that record every frame and let a test wait for a frame or the close, event-driven.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import WebSocket from "ws";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";

export interface StreamGateway extends GatewayProcess {
  keys: { ui: string; agreements: string; noStream: string };
  jwtSecret: string;
  /** Signs an HS256 token for `sub` with `claims`, expiring `ttlSeconds` from now. */
  signToken(sub: string, ttlSeconds: number, claims?: Record<string, unknown>): Promise<string>;
  /** Posts a signed e-sign webhook; resolves with the gateway event id. */
  postEsign(type?: string, options?: Parameters<typeof esignDelivery>[2]): Promise<string>;
  /** Posts a signed staffing webhook; resolves with the gateway event id. */
  postStaffing(type?: string): Promise<string>;
  wsUrl(query?: Record<string, string | string[]>): string;
}

export interface StartOptions {
  /** `GATEWAY_STREAM_*` tuning for the process. */
  stream?: Record<string, string>;
  edit?: (config: Record<string, any>) => void;
}

/** Starts a gateway process set up for the live stream. */
export async function startStreamGateway(options: StartOptions = {}): Promise<StreamGateway> {
  const secrets = makeSecrets();
  const keys = {
    ui: `ui_${randomBytes(12).toString("hex")}`,
    agreements: `agr_${randomBytes(12).toString("hex")}`,
    noStream: `nos_${randomBytes(12).toString("hex")}`,
  };
  const jwtSecret = randomBytes(32).toString("hex");
  const dataDir = await mkdtemp(join(tmpdir(), "gw-stream-"));
  const config: Record<string, any> = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    clients: [
      {
        id: "ui",
        apiKeyHashes: [adminKeyHash(keys.ui)],
        allowedOrigins: ["http://app.example.test"],
        scopes: { stream: {} },
      },
      {
        id: "agreements",
        apiKeyHashes: [adminKeyHash(keys.agreements)],
        scopes: { stream: { sources: ["esign"], types: ["agreement.*"] } },
      },
      { id: "no-stream", apiKeyHashes: [adminKeyHash(keys.noStream)] },
    ],
    auth: { jwt: { hs256Secret: "${TEST_JWT_SECRET}" } },
    destinations: [
      { id: "live", type: "stream" },
      { id: "audit", type: "stream" },
    ],
    routes: [
      { sources: ["esign"], destinations: ["live"] },
      { sources: ["staffing"], types: ["candidate.*"], destinations: ["live"] },
      { types: ["agreement.completed"], destinations: ["audit"] },
    ],
  };
  options.edit?.(config);
  const gateway = await startGatewayProcess({
    config,
    dataDir,
    secrets,
    env: { TEST_JWT_SECRET: jwtSecret, ...options.stream },
  });
  const post = async (sourceId: string, delivery: Awaited<ReturnType<typeof esignDelivery>>) => {
    const response = await postWebhook(gateway.url, sourceId, delivery);
    const body = (await response.json()) as { id: string };
    if (response.status !== 202) throw new Error(`webhook answered ${response.status}: ${JSON.stringify(body)}`);
    return body.id;
  };
  return {
    ...gateway,
    keys,
    jwtSecret,
    async signToken(sub, ttlSeconds, claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .sign(new TextEncoder().encode(jwtSecret));
    },
    postEsign: async (type = "agreement.completed", opts = {}) =>
      post("esign", await esignDelivery(secrets.esign, type, opts)),
    postStaffing: async (type = "candidate.accepted") =>
      post("staffing", await staffingDelivery(secrets.staffing, type)),
    wsUrl(query = {}) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        for (const item of Array.isArray(value) ? value : [value]) params.append(key, item);
      }
      const text = params.toString();
      return `${gateway.url.replace(/^http/, "ws")}/ws${text ? `?${text}` : ""}`;
    },
  };
}

export type Frame = { type: string; [key: string]: any };

/** Frames arriving on one connection, with waits that resolve on arrival. */
export class FrameLog {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];

  push(frame: Frame) {
    this.frames.push(frame);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Event ids in arrival order. */
  eventIds(): string[] {
    return this.frames.filter((f) => f.type === "event").map((f) => f.event.id);
  }

  /** Resolves with the first frame (from index `from`) satisfying `predicate`. */
  async waitFor(predicate: (frame: Frame) => boolean, what: string, timeoutMs = 15_000, from = 0): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find(predicate);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once `count` event frames arrived. */
  waitForEvents(count: number, timeoutMs = 15_000) {
    return this.waitFor(() => this.eventIds().length >= count, `${count} events`, timeoutMs);
  }
}

export interface WsClient {
  ws: WebSocket;
  log: FrameLog;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a WebSocket client that records frames; `headers` e.g. for `Authorization`. */
export function openWs(url: string, headers: Record<string, string> = {}): WsClient {
  const ws = new WebSocket(url, { headers });
  const log = new FrameLog();
  ws.on("message", (data) => log.push(JSON.parse(data.toString())));
  ws.on("error", () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return { ws, log, closed };
}

/** Opens a client and waits for its `ready` frame. */
export async function openReadyWs(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
  const client = openWs(url, headers);
  await client.log.waitFor((f) => f.type === "ready" || f.type === "error", "ready");
  const ready = client.log.frames[0];
  if (ready?.type !== "ready") throw new Error(`not ready: ${JSON.stringify(ready)}`);
  return client;
}

/**
 * Waits until every frame the gateway wrote to these connections before now has arrived: a
 * `ping` is answered after everything queued before it, on the same ordered connection.
 */
export async function syncClients(...clients: WsClient[]) {
  await Promise.all(
    clients.map(async (client) => {
      const from = client.log.frames.length;
      client.ws.send(JSON.stringify({ type: "ping" }));
      await client.log.waitFor((f) => f.type === "pong", "pong", 15_000, from);
    }),
  );
}

/** Sends a client message. */
export function sendMessage(client: WsClient, message: unknown) {
  client.ws.send(JSON.stringify(message));
}
