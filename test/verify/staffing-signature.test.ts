/**
 * staffing signatures (`X-Svc-Signature: t=<unix>,v1=<hex>` over `<t>.<raw body>`): known-answer
 * vectors, the strict header form, X-Svc-Timestamp, tolerance boundaries, rotation, raw bytes
 * and properties, against both crypto ports.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseStaffingSignature,
  type StaffingVerifyInput,
  verifyStaffingSignature,
} from "../../src/services/staffing/verify-staffing-signature.ts";
import {
  bytes,
  CRYPTO_PORTS,
  joinedHeader,
  RAW_BODIES,
  referenceHmacHex,
  referenceStaffingHex,
  reserialize,
} from "./reference-hmac.ts";

const SECRET = "whsec_staffing_test_secret_0123456789";
const BODY = bytes('{"event":"candidate.accepted","staffingRequestId":"sr_1","candidate":{"id":"c-1"}}');
const T = 1_767_225_600; // 2026-01-01T00:00:00Z
const HEX = referenceStaffingHex(SECRET, String(T), BODY);
const VALID = `t=${T},v1=${HEX}`;
const WRONG_HEX = referenceStaffingHex("a_different_secret_0123456789", String(T), BODY);
const V0 = `v0=${referenceHmacHex(SECRET, BODY)}`;

/** A header whose MAC is correct for the given timestamp text, so only its form is under test. */
const signedWith = (t: string) => `t=${t},v1=${referenceStaffingHex(SECRET, t, BODY)}`;

describe.each(CRYPTO_PORTS)("verifyStaffingSignature with %s", (_name, crypto) => {
  const verify = (overrides: Partial<StaffingVerifyInput> = {}) =>
    verifyStaffingSignature(
      {
        signature: VALID,
        timestamp: String(T),
        rawBody: BODY,
        secrets: [SECRET],
        toleranceSeconds: 300,
        nowSeconds: T,
        ...overrides,
      },
      crypto,
    );

  it("accepts a fixed known answer", async () => {
    // `printf '1700000000.{}' | openssl dgst -sha256 -hmac key_0123456789abcdef`
    const expected = "eeda9e0571e4b67210ad70934c098421c885fdd4ab59ced23a542bde57a19843";
    expect(referenceHmacHex("key_0123456789abcdef", "1700000000.{}")).toBe(expected);
    const result = await verify({
      signature: `t=1700000000,v1=${expected}`,
      timestamp: "1700000000",
      rawBody: bytes("{}"),
      secrets: ["key_0123456789abcdef"],
      nowSeconds: 1_700_000_000,
    });
    expect(result).toEqual({ ok: true });
  });

  it.each([
    ["the documented form", VALID],
    ["upper-case hex", `t=${T},v1=${HEX.toUpperCase()}`],
    ["parts in reverse order", `v1=${HEX},t=${T}`],
    ["v0 next to a valid v1 (v0 ignored)", `t=${T},${V0},v1=${HEX}`],
    ["another scheme v2 (ignored)", `t=${T},v1=${HEX},v2=abcdef`],
    ["several v1, the first one wrong", `t=${T},v1=${WRONG_HEX},v1=${HEX}`],
    ["several v1, the last one wrong", `v1=${HEX},v1=${WRONG_HEX},t=${T}`],
  ])("accepts %s", async (_case, signature) => {
    expect(await verify({ signature })).toEqual({ ok: true });
  });

  it.each<[string, string | null, string]>([
    ["absent header", null, "missing_signature"],
    ["empty header", "", "missing_signature"],
    ["no t", `v1=${HEX}`, "malformed_signature"],
    ["empty t", signedWith(""), "malformed_signature"],
    ["exponent t (1e3)", signedWith("1e3"), "malformed_signature"],
    ["t with trailing letters (17abc)", signedWith("17abc"), "malformed_signature"],
    ["negative t", signedWith("-5"), "malformed_signature"],
    ["t with a plus sign", signedWith(`+${T}`), "malformed_signature"],
    ["fractional t", signedWith(`${T}.5`), "malformed_signature"],
    ["20-digit t", signedWith("17672256001767225600"), "malformed_signature"],
    ["duplicated t (same value)", `t=${T},t=${T},v1=${HEX}`, "malformed_signature"],
    ["duplicated t (other value)", `t=${T},v1=${HEX},t=${T + 1}`, "malformed_signature"],
    ["only v0", `t=${T},${V0}`, "malformed_signature"],
    ["no v1 at all", `t=${T}`, "malformed_signature"],
    ["empty v1", `t=${T},v1=`, "malformed_signature"],
    ["63-digit v1", `t=${T},v1=${HEX.slice(0, 63)}`, "malformed_signature"],
    ["65-digit v1", `t=${T},v1=${HEX}0`, "malformed_signature"],
    ["non-hex v1", `t=${T},v1=z${HEX.slice(1)}`, "malformed_signature"],
    // Once any part is junk the header no longer has the documented form, even with a valid v1.
    ["a junk v1 next to a valid one", `t=${T},v1=${HEX},v1=zz`, "malformed_signature"],
    ["an unknown key next to a valid v1", `t=${T},v1=${HEX},x=1`, "malformed_signature"],
    ["upper-case keys", `T=${T},V1=${HEX}`, "malformed_signature"],
    ["a space after the comma", `t=${T}, v1=${HEX}`, "malformed_signature"],
    ["a space around =", `t = ${T},v1=${HEX}`, "malformed_signature"],
    ["semicolons instead of commas", `t=${T};v1=${HEX}`, "malformed_signature"],
    ["a trailing comma", `${VALID},`, "malformed_signature"],
    ["a leading space in a raw value", ` ${VALID}`, "malformed_signature"],
    ["duplicated header joined by Fetch", joinedHeader(VALID, VALID), "malformed_signature"],
    ["more than 16 parts", `${VALID}${`,v1=${WRONG_HEX}`.repeat(16)}`, "malformed_signature"],
    ["e-sign form", `sha256=${HEX}`, "malformed_signature"],
    ["signed with another secret", `t=${T},v1=${WRONG_HEX}`, "signature_mismatch"],
    ["a MAC over the body without the timestamp", `t=${T},v1=${referenceHmacHex(SECRET, BODY)}`, "signature_mismatch"],
    ["t changed after signing", `t=${T + 1},v1=${HEX}`, "signature_mismatch"],
  ])("rejects %s", async (_case, signature, reason) => {
    expect(await verify({ signature, timestamp: null })).toEqual({ ok: false, reason });
  });

  it("accepts a value with surrounding whitespace once it went through Fetch Headers", async () => {
    // RFC 9110 section 5.5: OWS around a field value is stripped by HTTP parsers and Headers;
    // whitespace inside the value is not OWS and is refused (table above).
    const headers = new Headers({ "x-svc-signature": `  ${VALID}\t` });
    expect(await verify({ signature: headers.get("x-svc-signature") })).toEqual({ ok: true });
  });

  describe("X-Svc-Timestamp", () => {
    it.each<[string, string | null, boolean]>([
      ["equal to t", String(T), true],
      ["absent", null, true],
      ["one second off", String(T + 1), false],
      ["not a number", "soon", false],
      ["empty", "", false],
      ["equal in value but with a leading zero", `0${T}`, false],
    ])("%s", async (_case, timestamp, ok) => {
      expect(await verify({ timestamp })).toEqual(ok ? { ok: true } : { ok: false, reason: "timestamp_mismatch" });
    });
  });

  describe("tolerance", () => {
    it.each<[string, number, number, boolean]>([
      ["now", 300, 0, true],
      ["exactly the tolerance in the past", 300, 300, true],
      ["exactly the tolerance in the future", 300, -300, true],
      ["one second past the tolerance in the past", 300, 301, false],
      ["one second past the tolerance in the future", 300, -301, false],
      ["a day in the past", 300, 86_400, false],
      ["custom 10 s, 10 s in the past", 10, 10, true],
      ["custom 10 s, 10 s in the future", 10, -10, true],
      ["custom 10 s, 11 s in the past", 10, 11, false],
      ["custom 10 s, 11 s in the future", 10, -11, false],
      ["custom 3600 s, 3600 s in the past", 3600, 3600, true],
    ])("%s", async (_case, toleranceSeconds, age, ok) => {
      const result = await verify({ toleranceSeconds, nowSeconds: T + age });
      expect(result).toEqual(ok ? { ok: true } : { ok: false, reason: "timestamp_out_of_tolerance" });
    });

    it("checks the MAC first: a forged stale header is a mismatch, not a stale delivery", async () => {
      expect(await verify({ signature: `t=${T},v1=${WRONG_HEX}`, nowSeconds: T + 10_000 })).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });
  });

  describe("rotation", () => {
    const OLD = "whsec_old_staffing_0123456789";
    const NEW = "whsec_new_staffing_0123456789";
    const header = (secret: string) => `t=${T},v1=${referenceStaffingHex(secret, String(T), BODY)}`;

    it("accepts a signature by the second active secret", async () => {
      expect(await verify({ signature: header(NEW), secrets: [OLD, NEW] })).toEqual({ ok: true });
      expect(await verify({ signature: header(OLD), secrets: [OLD, NEW] })).toEqual({ ok: true });
    });

    it("accepts one v1 per secret during a rotation", async () => {
      const both = `t=${T},v1=${referenceStaffingHex(OLD, String(T), BODY)},v1=${referenceStaffingHex(NEW, String(T), BODY)}`;
      expect(await verify({ signature: both, secrets: [NEW] })).toEqual({ ok: true });
    });

    it("rejects a signature by a retired secret", async () => {
      expect(await verify({ signature: header(OLD), secrets: [NEW] })).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });
  });

  describe("raw bytes", () => {
    it.each(RAW_BODIES)("verifies the exact bytes: %s", async (_case, rawBody) => {
      const signature = `t=${T},v1=${referenceStaffingHex(SECRET, String(T), rawBody)}`;
      expect(await verify({ signature, rawBody })).toEqual({ ok: true });
    });

    it("rejects a re-serialized JSON body", async () => {
      expect(await verify({ rawBody: reserialize(BODY) })).toEqual({ ok: false, reason: "signature_mismatch" });
    });
  });

  describe("properties", () => {
    it("verifies only a header carrying the true MAC for its t", async () => {
      const hexArb = fc.oneof(fc.constant(HEX), fc.constant(WRONG_HEX), fc.stringMatching(/^[0-9a-f]{64}$/));
      const partArb = fc.oneof(
        fc.constant(`t=${T}`),
        fc.integer({ min: T - 1000, max: T + 1000 }).map((t) => `t=${t}`),
        hexArb.map((hex) => `v1=${hex}`),
        fc.constant(V0),
        fc.string(),
      );
      const headerArb = fc.oneof(
        fc.string(),
        fc.array(partArb, { maxLength: 5 }).map((parts) => parts.join(",")),
        fc.constant(VALID),
      );
      await fc.assert(
        fc.asyncProperty(headerArb, async (signature) => {
          const result = await verify({ signature, timestamp: null });
          const parsed = parseStaffingSignature(signature);
          const trueHex = parsed ? referenceStaffingHex(SECRET, parsed.timestamp, BODY) : undefined;
          const carriesTrueMac = parsed?.macs.some((mac) => Buffer.from(mac).toString("hex") === trueHex) ?? false;
          const fresh = parsed !== undefined && Math.abs(Number(parsed.timestamp) - T) <= 300;
          expect(result.ok).toBe(carriesTrueMac && fresh);
          if (signature === VALID) expect(result.ok).toBe(true);
        }),
        { numRuns: 300 },
      );
    });

    it("never throws, whatever the inputs", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.option(fc.string({ unit: "binary" }), { nil: null }),
          fc.option(fc.string(), { nil: null }),
          fc.uint8Array({ maxLength: 256 }),
          fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
          fc.integer({ min: 1, max: 86_400 }),
          async (signature, timestamp, rawBody, nowSeconds, toleranceSeconds) => {
            const result = await verify({ signature, timestamp, rawBody, nowSeconds, toleranceSeconds });
            expect(typeof result.ok).toBe("boolean");
          },
        ),
        { numRuns: 200 },
      );
    });
  });
});

describe("parseStaffingSignature", () => {
  it("returns the timestamp text and every v1 MAC", () => {
    const parsed = parseStaffingSignature(`t=${T},v1=${HEX},v0=00,v1=${WRONG_HEX}`);
    expect(parsed?.timestamp).toBe(String(T));
    expect(parsed?.macs.map((mac) => Buffer.from(mac).toString("hex"))).toEqual([HEX, WRONG_HEX]);
  });

  it("never throws on arbitrary strings", () => {
    const structured = fc
      .array(
        fc.oneof(
          fc.constantFrom("t=", "v1=", "v0=", ",", "=", "-", "e"),
          fc.stringMatching(/^[0-9a-fA-F]{0,70}$/),
          fc.string(),
        ),
        {
          maxLength: 40,
        },
      )
      .map((pieces) => pieces.join(""));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 2000 }), structured), (header) => {
        const parsed = parseStaffingSignature(header);
        if (parsed) {
          expect(parsed.timestamp).toMatch(/^[0-9]{1,12}$/);
          expect(parsed.macs.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
