/**
 * e-sign signatures (`X-Svc-Signature: sha256=<hex>` over the raw body): known-answer vectors,
 * hostile headers, raw-byte handling, rotation and properties, against both crypto ports.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { verifyEsignSignature } from "../../src/services/esign/verify-esign-signature.ts";
import {
  bytes,
  CRYPTO_PORTS,
  joinedHeader,
  RAW_BODIES,
  referenceEsignHeader,
  referenceHmacHex,
  reserialize,
} from "./reference-hmac.ts";

const SECRET = "whsec_esign_test_secret_0123456789";
const BODY = bytes('{"event":"agreement.completed","event_id":"evt-7f3a","agreement_id":"a-1"}');
const HEX = referenceHmacHex(SECRET, BODY);

describe.each(CRYPTO_PORTS)("verifyEsignSignature with %s", (_name, crypto) => {
  const verify = (signature: string | null, rawBody = BODY, secrets: readonly string[] = [SECRET]) =>
    verifyEsignSignature({ signature, rawBody, secrets }, crypto);

  it("accepts RFC 4231 test case 2 (a fixed known answer)", async () => {
    // HMAC-SHA256(key "Jefe", "what do ya want for nothing?"), RFC 4231 section 4.3.
    const expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    expect(referenceHmacHex("Jefe", "what do ya want for nothing?")).toBe(expected);
    const result = await verify(`sha256=${expected}`, bytes("what do ya want for nothing?"), ["Jefe"]);
    expect(result).toEqual({ ok: true });
  });

  it.each([
    ["short ASCII secret", "0123456789abcdef", bytes("{}")],
    ["long secret (over the 64-byte HMAC block)", "s".repeat(200), BODY],
    ["non-ASCII secret", "hemlighet-åäö-🔑-0123456789", BODY],
    ["1 MiB body", SECRET, new Uint8Array(1024 * 1024).fill(0x61)],
  ])("accepts the node:crypto reference signature: %s", async (_case, secret, body) => {
    expect(await verify(referenceEsignHeader(secret, body), body, [secret])).toEqual({ ok: true });
  });

  it("accepts upper-case hex", async () => {
    expect(await verify(`sha256=${HEX.toUpperCase()}`)).toEqual({ ok: true });
  });

  it.each<[string, string | null, string]>([
    ["absent header", null, "missing_signature"],
    ["empty header", "", "missing_signature"],
    ["`sha256=` alone", "sha256=", "malformed_signature"],
    ["sha1= prefix", `sha1=${referenceHmacHex(SECRET, BODY).slice(0, 40)}`, "malformed_signature"],
    ["sha512= prefix", `sha512=${HEX}${HEX}`, "malformed_signature"],
    ["sha512= prefix with a sha256 mac", `sha512=${HEX}`, "malformed_signature"],
    ["upper-case SHA256= prefix", `SHA256=${HEX}`, "malformed_signature"],
    ["no prefix, bare hex", HEX, "malformed_signature"],
    ["63 hex digits", `sha256=${HEX.slice(0, 63)}`, "malformed_signature"],
    ["65 hex digits", `sha256=${HEX}0`, "malformed_signature"],
    ["non-hex digit", `sha256=g${HEX.slice(1)}`, "malformed_signature"],
    ["base64 instead of hex", `sha256=${Buffer.from(HEX, "hex").toString("base64")}`, "malformed_signature"],
    ["prefix not at the start", ` x sha256=${HEX}`, "malformed_signature"],
    ["prefix after a list item", `v1,sha256=${HEX}`, "malformed_signature"],
    ["duplicated header joined by Fetch", joinedHeader(`sha256=${HEX}`, `sha256=${HEX}`), "malformed_signature"],
    ["whitespace after the prefix", `sha256= ${HEX.slice(1)}`, "malformed_signature"],
    ["whitespace inside the hex", `sha256=${HEX.slice(0, 32)} ${HEX.slice(33)}`, "malformed_signature"],
    // Headers never hand us outer whitespace (see below); a raw caller that does is refused.
    ["leading space in a raw value", ` sha256=${HEX}`, "malformed_signature"],
    ["trailing space in a raw value", `sha256=${HEX} `, "malformed_signature"],
    ["trailing newline", `sha256=${HEX}\n`, "malformed_signature"],
    ["well-formed but wrong mac", `sha256=${"0".repeat(64)}`, "signature_mismatch"],
    ["one digit changed", `sha256=${HEX.slice(0, 63)}${HEX.endsWith("0") ? "1" : "0"}`, "signature_mismatch"],
    ["signed with another secret", referenceEsignHeader("another_secret_0123456789", BODY), "signature_mismatch"],
  ])("rejects %s", async (_case, header, reason) => {
    expect(await verify(header)).toEqual({ ok: false, reason });
  });

  it("accepts a value with surrounding whitespace once it went through Fetch Headers", async () => {
    // RFC 9110 section 5.5: optional whitespace around a field value is not part of it, so HTTP
    // parsers and the Headers class strip it. The verifier therefore never trims on its own.
    const headers = new Headers({ "x-svc-signature": ` \t sha256=${HEX} \t ` });
    expect(headers.get("x-svc-signature")).toBe(`sha256=${HEX}`);
    expect(await verify(headers.get("x-svc-signature"))).toEqual({ ok: true });
  });

  describe("raw bytes", () => {
    it.each(RAW_BODIES)("verifies the exact bytes: %s", async (_case, body) => {
      expect(await verify(referenceEsignHeader(SECRET, body), body)).toEqual({ ok: true });
    });

    it("rejects a re-serialized JSON body", async () => {
      const pretty = reserialize(BODY);
      expect(pretty).not.toEqual(BODY);
      expect(await verify(referenceEsignHeader(SECRET, BODY), pretty)).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });

    it("rejects a body with one byte changed or appended", async () => {
      const changed = BODY.slice();
      changed[10] = (changed[10] ?? 0) ^ 1;
      const header = referenceEsignHeader(SECRET, BODY);
      expect(await verify(header, changed)).toEqual({ ok: false, reason: "signature_mismatch" });
      expect(await verify(header, Uint8Array.from([...BODY, 0x0a]))).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });
  });

  describe("rotation", () => {
    const OLD = "whsec_old_secret_0123456789";
    const NEW = "whsec_new_secret_0123456789";

    it("accepts a signature by any active secret", async () => {
      expect(await verify(referenceEsignHeader(OLD, BODY), BODY, [OLD, NEW])).toEqual({ ok: true });
      expect(await verify(referenceEsignHeader(NEW, BODY), BODY, [OLD, NEW])).toEqual({ ok: true });
    });

    it("rejects a signature by a retired secret", async () => {
      expect(await verify(referenceEsignHeader(OLD, BODY), BODY, [NEW])).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });
  });

  describe("properties", () => {
    const TRUE_HEADER = `sha256=${HEX}`;
    // Arbitrary strings, plus near misses of the true header so the interesting region is hit.
    const nearMiss = fc
      .tuple(fc.integer({ min: 0, max: TRUE_HEADER.length }), fc.string({ maxLength: 3 }), fc.nat(3))
      .map(([at, insert, drop]) => TRUE_HEADER.slice(0, at) + insert + TRUE_HEADER.slice(at + drop));
    const headerArb = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.stringMatching(/^sha256=[0-9a-fA-F]{64}$/),
      nearMiss,
      fc.constant(TRUE_HEADER),
    );

    it("verifies only the true signature", async () => {
      await fc.assert(
        fc.asyncProperty(headerArb, async (header) => {
          const result = await verify(header);
          const isTrue = header.startsWith("sha256=") && header.slice(7).toLowerCase() === HEX;
          expect(result.ok).toBe(isTrue);
        }),
        { numRuns: 300 },
      );
    });

    it("never throws, whatever the header, body and secrets", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.option(fc.string({ unit: "binary" }), { nil: null }),
          fc.uint8Array({ maxLength: 256 }),
          fc.array(fc.string({ unit: "binary", minLength: 1 }), { minLength: 1, maxLength: 3 }),
          async (header, body, secrets) => {
            const result = await verify(header, body, secrets);
            expect(typeof result.ok).toBe("boolean");
          },
        ),
        { numRuns: 200 },
      );
    });
  });
});
