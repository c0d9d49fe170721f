/**
 * Calls into the Worker under test (`exports.default.fetch`) and the loopback HTTP receiver,
 * for the workerd suites: signed webhooks, admin requests, and a bounded wait for a condition.
 */
import { env, exports } from "cloudflare:workers";
import { ESIGN_SECRET, esignSignature, staffingSignature } from "./reference-signatures.ts";

export const BASE = "http://gateway.test";
/** The admin key whose hash the Worker has (a test-only binding, vitest.workers.config.ts). */
export const ADMIN_KEY = env.WORKERD_TEST_ADMIN_KEY;

/** POSTs a body to `/webhooks/{sourceId}` with the given headers. */
export function postWebhook(sourceId: string, body: string, headers: Record<string, string>): Promise<Response> {
  return exports.default.fetch(`${BASE}/webhooks/${sourceId}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** An e-sign body with a fresh upstream event id (`prefix-<uuid>`). */
export function esignBody(prefix: string, type = "agreement.completed"): { body: string; eventId: string } {
  const eventId = `${prefix}-${crypto.randomUUID()}`;
  return { eventId, body: JSON.stringify({ event: type, event_type: type, event_id: eventId, agreement_id: "ag-w" }) };
}

/** POSTs a correctly signed e-sign delivery. */
export async function postEsign(body: string): Promise<Response> {
  return postWebhook("esign", body, { "x-svc-signature": await esignSignature(ESIGN_SECRET, body) });
}

/** POSTs a staffing delivery signed with `secret` (now, a fresh delivery id). */
export async function postStaffing(body: string, secret: string): Promise<Response> {
  const t = Math.floor(Date.now() / 1000);
  return postWebhook("staffing", body, {
    "x-svc-signature": await staffingSignature(secret, body, t),
    "x-svc-delivery-id": `del-${crypto.randomUUID()}`,
  });
}

/** An admin API request. */
export function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(`${BASE}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json", ...init.headers },
  });
}

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The exact bytes of the body, base64. */
  bodyBase64: string;
}

/** What the receiver got on `path`. */
export async function received(path: string): Promise<Received[]> {
  return (await (await fetch(`${env.TEST_SINK_URL}/received?path=${encodeURIComponent(path)}`)).json()) as Received[];
}

/** Makes the receiver answer `status` to the next `count` requests to `path` whose body contains `match`. */
export async function failHooks(match: string, count: number, status = 503, path = "/hook"): Promise<void> {
  await fetch(`${env.TEST_SINK_URL}/fail`, { method: "POST", body: JSON.stringify({ match, count, status, path }) });
}

/**
 * Polls `check` until it returns a value other than undefined: at most `attempts` times, each
 * after the previous answer (no fixed sleeps; the retry timers themselves are 50 ms).
 */
export async function waitFor<T>(check: () => Promise<T | undefined>, attempts = 400): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await scheduler.wait(25);
  }
  throw new Error("condition not met in time");
}

declare const scheduler: { wait(ms: number): Promise<void> };

/** The test app key the Worker accepts on `/ws` (vitest.workers.config.ts). */
const WS_APP_KEY = "workerd_test_app_key_0123456789";

/**
 * A live WebSocket to the Worker under test: every text frame it received, and `until`, which
 * waits (frame by frame, at most 1,000) for the first one that matches.
 */
export async function openLiveSocket(): Promise<{
  socket: WebSocket;
  texts: string[];
  until(match: (text: string) => boolean): Promise<string | undefined>;
}> {
  const response = await exports.default.fetch(`${BASE}/ws`, {
    headers: { upgrade: "websocket", authorization: `Bearer ${WS_APP_KEY}` },
  });
  const socket = (response as Response & { webSocket: WebSocket & { accept(): void } }).webSocket;
  socket.accept();
  const texts: string[] = [];
  let wake: (() => void) | undefined;
  socket.addEventListener("message", (m) => {
    texts.push(String(m.data));
    wake?.();
  });
  const until = async (match: (text: string) => boolean) => {
    for (let turns = 0; turns < 1000 && !texts.some(match); turns++) await new Promise<void>((r) => (wake = r));
    return texts.find(match);
  };
  return { socket, texts, until };
}
