/**
 * `decodeHex32` (src/crypto/crypto-port.ts), which reads every webhook's signature: exactly 64
 * hex digits of either case decode to their 32 bytes, anything else is refused.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { decodeHex32, toHex } from "../../src/crypto/crypto-port.ts";

it("decodes 64 hex digits of any case to their bytes", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
      (bytes, upper) => {
        const hex = [...toHex(bytes)].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("");
        expect(decodeHex32(hex)).toEqual(bytes);
      },
    ),
  );
});

it("refuses anything but exactly 64 hex digits", () => {
  const digits = "0123456789abcdef".repeat(4);
  for (const bad of [
    "",
    digits.slice(1),
    `${digits}0`,
    `g${digits.slice(1)}`,
    ` ${digits.slice(1)}`,
    `${digits.slice(1)}\n`,
  ]) {
    expect(decodeHex32(bad)).toBeUndefined();
  }
  fc.assert(
    fc.property(fc.string({ minLength: 64, maxLength: 64 }), (text) => {
      const decoded = decodeHex32(text);
      expect(decoded !== undefined).toBe(/^[0-9a-fA-F]{64}$/.test(text));
    }),
  );
});
