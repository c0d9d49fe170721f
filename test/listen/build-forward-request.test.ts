/**
 * The listener's request building without the event log (a stream-only credential): the body is
 * the event's data re-serialized, the identity header rebuilt, and each format still verifies
 * with the standard tools; and the frames it accepts or ignores.
 */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { buildForwardRequest } from "../../src/listen/build-forward-request.ts";
import type { ListenedEvent } from "../../src/listen/listen-frames.ts";
import { parseListenFrame } from "../../src/listen/listen-frames.ts";
import { streamUrlOf } from "../../src/listen/listen-loop.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { verifyStaffingSignature } from "../../src/services/staffing/verify-staffing-signature.ts";

const crypto = createWebCrypto();
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const now = Date.parse("2026-11-24T12:00:00Z");
const staffingEvent: ListenedEvent = {
  id: "evt_1",
  type: "candidate.accepted",
  subject: "staffing-requests/sr_1",
  time: "2026-11-24T11:59:59Z",
  service: "staffing",
  data: { event: "candidate.accepted", staffingRequestId: "sr_1" },
  upstreamid: "del-42",
  upstreamidkind: "delivery-id",
};

describe("buildForwardRequest", () => {
  it("cloudevents: Standard Webhooks over the CloudEvent JSON", async () => {
    const request = await buildForwardRequest(
      "cloudevents",
      staffingEvent,
      secret,
      Date.now(),
      crypto,
      builtinServices,
    );
    const verified = new Webhook(secret).verify(new TextDecoder().decode(request.body), request.headers);
    expect(verified).toEqual(staffingEvent);
    expect(request.headers["webhook-id"]).toBe("evt_1");
  });

  it("upstream without the recorded delivery: data re-serialized, delivery id rebuilt, staffing scheme", async () => {
    const request = await buildForwardRequest("upstream", staffingEvent, secret, now, crypto, builtinServices);
    expect(new TextDecoder().decode(request.body)).toBe(JSON.stringify(staffingEvent.data));
    expect(request.headers["x-svc-delivery-id"]).toBe("del-42");
    expect(request.headers["x-svc-timestamp"]).toBe(String(now / 1000));
    const check = await verifyStaffingSignature(
      {
        signature: request.headers["x-svc-signature"] ?? null,
        timestamp: request.headers["x-svc-timestamp"] ?? null,
        rawBody: request.body,
        secrets: [secret],
        toleranceSeconds: 300,
        nowSeconds: now / 1000,
      },
      crypto,
    );
    expect(check).toEqual({ ok: true });
  });

  it("upstream with an unknown service refuses rather than sending unsigned", async () => {
    await expect(
      buildForwardRequest("upstream", { ...staffingEvent, service: "other" }, secret, now, crypto, builtinServices),
    ).rejects.toThrow(/no upstream signature scheme/);
  });
});

describe("listen frames and URL", () => {
  it.each([
    ['{"type":"ready","cursor":"4","subscriptions":{},"heartbeatMs":25000,"expiresAt":null}', "ready"],
    ['{"type":"heartbeat","cursor":"9","time":"2026-11-24T12:00:00Z"}', "heartbeat"],
    ['{"type":"error","code":"forbidden","message":"no","fatal":true}', "error"],
    [`{"type":"event","cursor":"5","event":${JSON.stringify(staffingEvent)}}`, "event"],
    ['{"type":"event","cursor":"x5","event":{}}', undefined],
    ['{"type":"event","cursor":"5"}', undefined],
    ["not json", undefined],
  ])("%s -> %s", (text, type) => {
    expect(parseListenFrame(text)?.type).toBe(type);
  });

  it("builds the /ws URL with repeatable filters and the cursor", () => {
    const url = streamUrlOf(
      { gatewayUrl: "https://gw.example.com", filters: { source: ["esign"], type: ["agreement.*", "x"] } },
      "12",
    );
    expect(url).toBe("wss://gw.example.com/ws?source=esign&type=agreement.*&type=x&since=12");
  });
});
