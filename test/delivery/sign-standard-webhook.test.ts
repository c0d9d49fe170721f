/**
 * The signature of an `http` attempt is the same whichever HMAC signs it: Node's synchronous
 * `node:crypto` port (the request is then built without a promise, and the signed content is
 * never copied into one buffer) and Web Crypto give byte-identical `webhook-signature` headers,
 * one `v1,` signature per secret, each verified by the reference `standardwebhooks` library over
 * exactly the bytes sent, for CloudEvents, transformed payloads and relayed non-UTF-8 bodies.
 */
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { nodeHmacBase64 } from "../../adapters/sink/http.ts";
import { buildWebhookRequest, type WebhookRequest } from "../../src/delivery/http/build-webhook-request.ts";
import { signStandardWebhook, webCryptoHmac } from "../../src/delivery/http/sign-standard-webhook.ts";
import type { DeliverableRecord } from "../../src/delivery/sink-contract.ts";
import { toBase64 } from "../../src/encoding/base64.ts";

const SECRETS = [
  `whsec_${toBase64(new Uint8Array(32).map((_, i) => i * 7 + 1))}`,
  `whsec_${toBase64(new Uint8Array(24).map((_, i) => 255 - i))}`,
];

const destination = (mode: "cloudevent" | "relay") => ({
  url: "https://receiver.example/hook",
  mode,
  secrets: SECRETS,
  headers: { authorization: "Bearer t" },
});

function record(id: string, extra: Partial<DeliverableRecord> = {}): DeliverableRecord {
  return {
    id,
    seq: 1,
    sourceId: "esign",
    identity: "i",
    receivedAt: 0,
    event: {
      specversion: "1.0",
      id,
      source: "/webhooks/esign",
      type: "t",
      data: { name: "Åsa Öberg ✓ 名前 \u{1F600}" },
    },
    rawBody: "",
    headers: { "content-type": "application/json", connection: "close", "x-esign-signature": "[redacted]" },
    marks: [],
    ...extra,
  } as unknown as DeliverableRecord;
}

/**
 * Every secret's signature verifies over the bytes sent: recomputed here over the concatenated
 * bytes, and with the reference library where the body is UTF-8 (it reads the payload as text).
 */
function expectVerified(request: WebhookRequest, utf8: boolean) {
  const signatures = request.headers["webhook-signature"]?.split(" ") ?? [];
  expect(signatures).toHaveLength(SECRETS.length);
  SECRETS.forEach((secret, i) => {
    const content = Buffer.concat([
      Buffer.from(`${request.headers["webhook-id"]}.${request.headers["webhook-timestamp"]}.`),
      request.body,
    ]);
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    expect(signatures[i]).toBe(`v1,${createHmac("sha256", key).update(content).digest("base64")}`);
    if (utf8) {
      expect(() => new Webhook(secret).verify(new TextDecoder().decode(request.body), request.headers)).not.toThrow();
    }
  });
}

const cases: [string, "cloudevent" | "relay", DeliverableRecord][] = [
  ["a CloudEvent with non-ASCII data", "cloudevent", record("evt_a")],
  ["a transformed payload", "cloudevent", record("evt_b", { transformed: { json: '{"x":"ü","y":[1,2]}' } })],
  [
    "a relayed body that is not UTF-8",
    "relay",
    record("evt_c", {
      rawBody: toBase64(new Uint8Array([0x7b, 0xff, 0xfe, 0x00, 0xc3, 0x7d])),
      rawBodyEncoding: "base64",
    }),
  ],
  ["a relayed UTF-8 body", "relay", record("evt_d", { rawBody: '{"name":"Ærø"}', rawBodyEncoding: "utf8" })],
];

describe("Standard Webhooks signatures of http attempts", () => {
  it.each(cases)("%s: Node and Web Crypto sign the same bytes alike, and both verify", async (_name, mode, rec) => {
    const now = Date.now();
    const built = buildWebhookRequest(destination(mode), rec, now, nodeHmacBase64);
    // Node's HMAC is synchronous: the request comes without a promise.
    expect(built).not.toBeInstanceOf(Promise);
    const node = built as WebhookRequest;
    const web = await buildWebhookRequest(destination(mode), rec, now, webCryptoHmac);
    expect(node.headers["webhook-signature"]).toBe(web.headers["webhook-signature"]);
    expect(Object.keys(node.headers)).toEqual(Object.keys(web.headers));
    expect(Buffer.from(node.body).equals(Buffer.from(web.body))).toBe(true);
    const utf8 = mode === "cloudevent" || rec.rawBodyEncoding === "utf8";
    expectVerified(node, utf8);
    expectVerified(web, utf8);
  });

  it("signs again for every attempt (the timestamp moves) and never reuses another message's signature", () => {
    const body = new TextEncoder().encode('{"a":1}');
    const first = signStandardWebhook(SECRETS, "evt_x", 1_700_000_000, body, nodeHmacBase64);
    const later = signStandardWebhook(SECRETS, "evt_x", 1_700_000_060, body, nodeHmacBase64);
    const other = signStandardWebhook(SECRETS, "evt_y", 1_700_000_000, body, nodeHmacBase64);
    expect(new Set([first, later, other]).size).toBe(3);
    expect(first).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
  });
});
