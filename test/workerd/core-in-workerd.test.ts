/**
 * The runtime-agnostic core inside workerd: both signature schemes (valid, tampered, stale) on
 * the Web Crypto port, and normalization of every documented sample event.
 */

import { parse } from "valibot";
import { describe, expect, it } from "vitest";
import { SourceSchema } from "../../src/config/schema.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { normalizeEvent } from "../../src/events/normalize-event.ts";
import { buildSampleDelivery, sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { verifyEsignSignature } from "../../src/services/esign/verify-esign-signature.ts";
import { verifyStaffingSignature } from "../../src/services/staffing/verify-staffing-signature.ts";
import { esignSignature, hmacHex, staffingSignature, utf8 } from "./reference-signatures.ts";

const crypto = createWebCrypto();
const SECRET = "workerd_core_secret_0123456789";
const BODY = '{"event":"agreement.completed","event_id":"evt-w1","note":"✍️\u2028"}';
const NOW = 1_767_225_600;

describe("e-sign verification in workerd", () => {
  const verify = (signature: string, body = BODY) =>
    verifyEsignSignature({ signature, rawBody: utf8(body), secrets: [SECRET] }, crypto);

  it("accepts a reference signature", async () => {
    expect(await verify(await esignSignature(SECRET, BODY))).toEqual({ ok: true });
  });

  it("rejects a tampered body, a wrong secret and a malformed header", async () => {
    const signature = await esignSignature(SECRET, BODY);
    expect(await verify(signature, BODY.replace("w1", "w2"))).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(await verify(await esignSignature("another_secret_0123456789", BODY))).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
    expect(await verify(signature.replace("sha256=", "sha1="))).toEqual({ ok: false, reason: "malformed_signature" });
  });
});

describe("staffing verification in workerd", () => {
  const verify = (signature: string, nowSeconds = NOW, body = BODY) =>
    verifyStaffingSignature(
      { signature, timestamp: null, rawBody: utf8(body), secrets: [SECRET], toleranceSeconds: 300, nowSeconds },
      crypto,
    );

  it("accepts a reference signature, also at the tolerance boundary", async () => {
    const signature = await staffingSignature(SECRET, BODY, NOW);
    expect(await verify(signature)).toEqual({ ok: true });
    expect(await verify(signature, NOW + 300)).toEqual({ ok: true });
    expect(await verify(signature, NOW - 300)).toEqual({ ok: true });
  });

  it("rejects a tampered body and a changed timestamp", async () => {
    const signature = await staffingSignature(SECRET, BODY, NOW);
    expect(await verify(signature, NOW, `${BODY} `)).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(await verify(signature.replace(`t=${NOW}`, `t=${NOW + 1}`))).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
  });

  it("rejects a stale or future delivery with timestamp_out_of_tolerance", async () => {
    const signature = await staffingSignature(SECRET, BODY, NOW);
    expect(await verify(signature, NOW + 301)).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
    expect(await verify(signature, NOW - 301)).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
  });

  it("agrees with the reference HMAC on the Web Crypto port's own signing", async () => {
    const mac = await crypto.signHmacSha256(SECRET, [utf8(`${NOW}.`), utf8(BODY)]);
    const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(hex).toBe(await hmacHex(SECRET, utf8(`${NOW}.${BODY}`)));
  });
});

describe("normalization in workerd", () => {
  const sources = {
    esign: parse(SourceSchema, { id: "esign", service: "esign", secrets: [SECRET] }),
    staffing: parse(SourceSchema, { id: "staffing", service: "staffing", secrets: [SECRET] }),
  };

  for (const service of ["esign", "staffing"] as const) {
    it.each(sampleEventTypes(service))(`${service} %s normalizes with no marks`, async (type) => {
      const delivery = await buildSampleDelivery(crypto, service, type, SECRET, { uniqueId: "w", now: NOW * 1000 });
      const result = await normalizeEvent(
        {
          source: sources[service],
          rawBody: utf8(delivery.body),
          headers: new Headers(delivery.headers),
          receivedAt: NOW * 1000,
        },
        crypto,
      );
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.marks).toEqual([]);
      expect(result.event).toMatchObject({
        specversion: "1.0",
        source: `/webhooks/${service}`,
        type,
        service,
        data: JSON.parse(delivery.body),
        upstreamid: service === "esign" ? "evt-w" : "del-w",
      });
      expect(result.event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    });
  }
});
