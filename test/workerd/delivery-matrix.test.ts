/**
 * The delivery matrix in workerd (issue 18), for what Workers support of it: both services × both
 * `http` modes (CloudEvents and relay) × three bodies (ASCII JSON; UTF-8 with non-ASCII text and
 * spacing a re-serialiser would change; bytes that are not valid UTF-8 inside a JSON string).
 * Relay must deliver the exact bytes and the upstream's headers, signed per Standard Webhooks
 * over those bytes; the event log must give the bytes back. Queue on Cloudflare Queues and the
 * live stream have their own workerd suites (delivery.test.ts, live-stream.test.ts).
 */
import { env, exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { admin, BASE, type Received, received, waitFor } from "./gateway-client.ts";
import { ESIGN_SECRET, hmacHex, STAFFING_SECRET, utf8 } from "./reference-signatures.ts";

type BodyKind = "ascii" | "utf8-odd-spacing" | "invalid-utf8";
const KINDS: BodyKind[] = ["ascii", "utf8-odd-spacing", "invalid-utf8"];
const SERVICES = ["esign", "staffing"] as const;

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function bodyOf(service: (typeof SERVICES)[number], kind: BodyKind, unique: string): Uint8Array<ArrayBuffer> {
  const sample =
    service === "esign"
      ? { event: "matrix.test", event_id: `evt-${unique}`, agreement_id: "ag-matrix" }
      : { event: "matrix.test", staffingRequestId: `sr-${unique}` };
  if (kind === "ascii") return utf8(JSON.stringify({ ...sample, note: "plain ascii" }));
  if (kind === "utf8-odd-spacing") {
    const text = JSON.stringify({ ...sample, note: "Åsa Öberg — 東京 🎉 naïve\u00a0café" }, null, "\t")
      .replace(/":/g, '" :')
      .replace(/,\n/g, " ,\r\n");
    return utf8(`${text}\n `);
  }
  const bad = [0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80];
  return Uint8Array.from([...utf8('{"note":"'), ...bad, ...utf8(`",${JSON.stringify(sample).slice(1)}`)]);
}

async function post(service: (typeof SERVICES)[number], bytes: Uint8Array<ArrayBuffer>) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (service === "esign") {
    headers["x-svc-signature"] = `sha256=${await hmacHex(ESIGN_SECRET, bytes)}`;
  } else {
    const t = Math.floor(Date.now() / 1000);
    const signed = Uint8Array.from([...utf8(`${t}.`), ...bytes]);
    headers["x-svc-signature"] = `t=${t},v1=${await hmacHex(STAFFING_SECRET, signed)}`;
    headers["x-svc-timestamp"] = String(t);
    headers["x-svc-delivery-id"] = `del-${crypto.randomUUID()}`;
  }
  const response = await exports.default.fetch(`${BASE}/webhooks/${service}`, { method: "POST", headers, body: bytes });
  const answer = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(answer)).toBe(202);
  return { id: answer.id, headers };
}

/** `v1,<base64 HMAC>` over `{id}.{timestamp}.{bytes}` with the whsec key (Standard Webhooks). */
async function standardSignature(id: string, timestamp: string, bytes: Uint8Array): Promise<string> {
  const keyBytes = fromBase64(env.WORKERD_TEST_WHSEC.replace(/^whsec_/, ""));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signed = Uint8Array.from([...utf8(`${id}.${timestamp}.`), ...bytes]);
  return `v1,${toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, signed)))}`;
}

const arrivedFor = (path: string, id: string) =>
  waitFor(async () => (await received(path)).find((r: Received) => r.headers["webhook-id"] === id));

describe.each(SERVICES)("%s on Workers", (service) => {
  it.each(KINDS)(
    "%s: http CloudEvents and relay deliver, relay with the exact bytes; the log keeps them",
    async (kind) => {
      const bytes = bodyOf(service, kind, crypto.randomUUID());
      const { id, headers } = await post(service, bytes);
      const parsed = JSON.parse(new TextDecoder().decode(bytes));

      const cloudevent = await arrivedFor("/matrix-cloudevents", id);
      const event = new Webhook(env.WORKERD_TEST_WHSEC).verify(cloudevent.body, cloudevent.headers) as {
        data: unknown;
      };
      expect(event.data).toEqual(parsed);

      const relayed = await arrivedFor("/matrix-relay", id);
      expect(sameBytes(fromBase64(relayed.bodyBase64), bytes)).toBe(true);
      for (const name of ["content-type", "x-svc-timestamp", "x-svc-delivery-id"]) {
        if (headers[name] !== undefined) expect(relayed.headers[name]).toBe(headers[name]);
      }
      expect(relayed.headers["x-svc-signature"]).toBeUndefined();
      const timestamp = relayed.headers["webhook-timestamp"] as string;
      expect(relayed.headers["webhook-signature"]).toBe(await standardSignature(id, timestamp, bytes));

      const logged = (await (await admin(`/events/${id}`)).json()) as { raw_body_base64: string };
      expect(sameBytes(fromBase64(logged.raw_body_base64), bytes)).toBe(true);
    },
  );
});
