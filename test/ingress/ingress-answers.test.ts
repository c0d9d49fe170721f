/**
 * The ingress answers table of PRODUCT.md against a real gateway process: every situation's
 * status, body and headers, the error envelope with a JSON content type, and X-Request-Id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  expectErrorEnvelope,
  listAllEventIds,
  postWebhook,
  readAnswer,
  signEsignBytes,
  signStaffingBytes,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startGatewayWithTinySource } from "./gateway-fixtures.ts";
import { openStreamedRequest } from "./streamed-request.ts";

const EVENT_ID = /^evt_[0-9a-f]{32}$/;
let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startGatewayWithTinySource();
});
afterAll(async () => {
  await gw.kill();
});

describe("accepted and duplicate", () => {
  it("answers 202 {id, duplicate:false} for a new e-sign event, then 200 duplicate with the same id", async () => {
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.signed");
    const first = await readAnswer(await postWebhook(gw.url, "esign", delivery));
    expect(first.status).toBe(202);
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    expect(first.body).toEqual({ id: expect.stringMatching(EVENT_ID), duplicate: false });
    const again = await readAnswer(await postWebhook(gw.url, "esign", delivery));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, duplicate: true });
  });

  it("dedupes staffing redeliveries by X-Svc-Delivery-Id even when re-signed later", async () => {
    const uniqueId = crypto.randomUUID();
    const first = await readAnswer(
      await postWebhook(
        gw.url,
        "staffing",
        await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { uniqueId }),
      ),
    );
    expect(first.status).toBe(202);
    const resigned = await staffingDelivery(gw.secrets.staffing, "candidate.accepted", {
      uniqueId,
      now: Date.now() + 60_000,
    });
    const again = await readAnswer(await postWebhook(gw.url, "staffing", resigned));
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, duplicate: true } });
  });

  it("dedupes staffing deliveries without X-Svc-Delivery-Id by the body hash", async () => {
    const uniqueId = crypto.randomUUID();
    const now = Date.now();
    const make = () => staffingDelivery(gw.secrets.staffing, "staffing.completed", { uniqueId, now, deliveryId: null });
    const first = await readAnswer(await postWebhook(gw.url, "staffing", await make()));
    const again = await readAnswer(await postWebhook(gw.url, "staffing", await make()));
    expect(first).toMatchObject({ status: 202, body: { duplicate: false } });
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, duplicate: true } });
  });
});

describe("401 invalid_signature", () => {
  it("says why in details.reason", async () => {
    const delivery = await esignDelivery(gw.secrets.esign);
    const { "x-svc-signature": _, ...unsigned } = delivery.headers;
    const cases: [Record<string, string>, string][] = [
      [unsigned, "missing_signature"],
      [{ ...unsigned, "x-svc-signature": "" }, "missing_signature"],
      [{ ...unsigned, "x-svc-signature": `sha1=${"ab".repeat(20)}` }, "malformed_signature"],
      [{ ...unsigned, "x-svc-signature": "sha256=zz" }, "malformed_signature"],
      [(await esignDelivery("whsec_not_the_right_secret_at_all")).headers, "signature_mismatch"],
    ];
    for (const [headers, reason] of cases) {
      const response = await postWebhook(gw.url, "esign", { body: delivery.body, headers });
      const error = await expectErrorEnvelope(response, 401, "invalid_signature");
      expect(error.details).toEqual({ reason });
    }
  });

  it("rejects a staffing X-Svc-Timestamp that differs from the signed t", async () => {
    const delivery = await staffingDelivery(gw.secrets.staffing);
    const headers = { ...delivery.headers, "x-svc-timestamp": String(Number(delivery.headers["x-svc-timestamp"]) + 1) };
    const error = await expectErrorEnvelope(
      await postWebhook(gw.url, "staffing", { ...delivery, headers }),
      401,
      "invalid_signature",
    );
    expect(error.details).toEqual({ reason: "timestamp_mismatch" });
  });
});

describe("401 timestamp_out_of_tolerance", () => {
  it("rejects genuine staffing signatures more than 300 s old or ahead, accepts 290 s", async () => {
    for (const offset of [-310_000, 310_000]) {
      const delivery = await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: Date.now() + offset });
      const error = await expectErrorEnvelope(
        await postWebhook(gw.url, "staffing", delivery),
        401,
        "timestamp_out_of_tolerance",
      );
      expect(error.details).toEqual({ toleranceSeconds: 300 });
    }
    const inside = await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: Date.now() - 290_000 });
    expect((await postWebhook(gw.url, "staffing", inside)).status).toBe(202);
  });
});

describe("400 invalid_body (the signature is valid)", () => {
  it("rejects bodies that are not JSON objects or lack the e-sign event_id", async () => {
    const bodies = ["not json at all", "[1,2,3]", '"just a string"', '{"event":"agreement.sent"}', '{"event_id":42}'];
    for (const text of bodies) {
      const bytes = utf8(text);
      const response = await postWebhook(gw.url, "esign", {
        body: bytes,
        headers: await signEsignBytes(gw.secrets.esign, bytes),
      });
      await expectErrorEnvelope(response, 400, "invalid_body");
    }
    const staffing = utf8("<xml/>");
    const response = await postWebhook(gw.url, "staffing", {
      body: staffing,
      headers: await signStaffingBytes(gw.secrets.staffing, staffing),
    });
    await expectErrorEnvelope(response, 400, "invalid_body");
  });
});

describe("404 unknown_source", () => {
  it("answers in the envelope, even for a correctly signed delivery", async () => {
    const delivery = await esignDelivery(gw.secrets.esign);
    await expectErrorEnvelope(await postWebhook(gw.url, "nope", delivery), 404, "unknown_source");
  });
});

describe("X-Request-Id", () => {
  it("echoes a given id on success and on errors", async () => {
    const delivery = await esignDelivery(gw.secrets.esign);
    const ok = await postWebhook(gw.url, "esign", delivery, { "x-request-id": "req-abc-123" });
    expect(ok.headers.get("x-request-id")).toBe("req-abc-123");
    const bad = await postWebhook(gw.url, "esign", { ...delivery, headers: {} }, { "x-request-id": "req-bad-1" });
    expect(bad.headers.get("x-request-id")).toBe("req-bad-1");
    const unknown = await postWebhook(gw.url, "nope", delivery, { "x-request-id": "req-404" });
    expect(unknown.headers.get("x-request-id")).toBe("req-404");
  });

  it("generates a fresh id when absent (or unusable)", async () => {
    const delivery = await esignDelivery(gw.secrets.esign);
    const a = (await postWebhook(gw.url, "esign", delivery)).headers.get("x-request-id");
    const b = (await postWebhook(gw.url, "esign", delivery)).headers.get("x-request-id");
    const c = (await postWebhook(gw.url, "esign", delivery, { "x-request-id": "x".repeat(300) })).headers.get(
      "x-request-id",
    );
    for (const id of [a, b, c]) expect(id).toMatch(/^[\x21-\x7e]{8,128}$/);
    expect(new Set([a, b, c]).size).toBe(3);
  });
});

describe("413 payload_too_large", () => {
  it("refuses a declared Content-Length over the limit without reading the body", async () => {
    const delivery = await esignDelivery(gw.secrets.esign);
    const request = openStreamedRequest(`${gw.url}/webhooks/tiny`, {
      ...delivery.headers,
      "content-length": String(10 * 1024 * 1024),
      "x-request-id": "req-too-large",
    });
    await request.write(new Uint8Array(100));
    // The body is never completed: the answer must come from the declared length alone.
    const answer = await request.answer;
    request.destroy();
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(answer.headers["x-request-id"]).toBe("req-too-large");
    // The unread rest of the body must not keep the connection (and a shutdown) waiting.
    expect(answer.headers.connection).toBe("close");
    expect(JSON.parse(answer.text).error).toMatchObject({ code: "payload_too_large", details: { limit: 1024 } });
  });

  it("cuts off a chunked body without Content-Length as soon as it streams past the limit", async () => {
    const before = await listAllEventIds(gw.url, gw.secrets.adminKey, "source=tiny");
    // A genuinely signed delivery of 256 KiB, written 1 KiB at a time and never ended: only the
    // limit can produce an answer, and it must come long before the body is through.
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed", {
      edit: (body) => {
        body.pad = "x".repeat(256 * 1024);
      },
    });
    const request = openStreamedRequest(`${gw.url}/webhooks/tiny`, delivery.headers);
    // Sixteen times the limit, then nothing more: the body is never complete, so the answer can
    // only come from the limit (however fast or slow the machine is).
    const written = 16 * 1024;
    let sent = 0;
    while (sent < written && !request.answered) {
      await request.write(delivery.body.subarray(sent, sent + 1024));
      sent += 1024;
    }
    // The gateway reads and discards the rest for a while after its answer (a staged close,
    // adapters/node/linger-after-refusal.ts), so the answer is read, not lost to a reset.
    const answer = await request.answer;
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text).error.code).toBe("payload_too_large");
    expect(answer.headers.connection).toBe("close");
    expect(sent).toBeLessThan(delivery.body.length);
    // The server closes its side after the answer, and records nothing.
    await request.closed;
    request.destroy();
    expect(await listAllEventIds(gw.url, gw.secrets.adminKey, "source=tiny")).toEqual(before);
  });

  it("still accepts a body at the limit", async () => {
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.sent");
    const text = new TextDecoder().decode(delivery.body);
    const padded = utf8(`${text.slice(0, -1)},"pad":"${"p".repeat(1024 - delivery.body.length - 9)}"}`);
    expect(padded.length).toBe(1024);
    const response = await postWebhook(gw.url, "tiny", {
      body: padded,
      headers: await signEsignBytes(gw.secrets.esign, padded),
    });
    expect(response.status).toBe(202);
  });
});
