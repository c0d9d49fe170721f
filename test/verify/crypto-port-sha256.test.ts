/**
 * SHA-256 of both crypto ports against `node:crypto`'s streaming hash (an independent reference):
 * the Node port hashes with the one-shot `crypto.hash` and hands the digest over as a view, so
 * the inputs that could trip it are covered: empty, one block's edges, large, views into a larger
 * buffer at an offset, and non-UTF-8 bytes; and a digest is its own 32 bytes (a caller may keep it).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CRYPTO_PORTS } from "./reference-hmac.ts";

const reference = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

function inputs(): [string, Uint8Array][] {
  const backing = new Uint8Array(4096).map((_, i) => (i * 131 + 7) & 0xff);
  return [
    ["empty", new Uint8Array(0)],
    ...[1, 55, 56, 63, 64, 65, 1000].map((n): [string, Uint8Array] => [`${n} bytes`, backing.slice(0, n)]),
    ["1 MiB", new Uint8Array(1 << 20).fill(0xa5)],
    ["a view at offset 3", backing.subarray(3, 3 + 200)],
    ["a view at the end", backing.subarray(4000)],
    ["invalid UTF-8", new Uint8Array([0xff, 0xfe, 0xc3, 0x28, 0x00, 0x80])],
    ["a Buffer", Buffer.from("esign\u0000evt-1", "utf8")],
  ];
}

describe.each(CRYPTO_PORTS)("sha256 (%s)", (_name, crypto) => {
  it.each(inputs())("matches node:crypto for %s", async (_label, data) => {
    const before = hex(data);
    const digest = await crypto.sha256(data);
    expect(digest).toBeInstanceOf(Uint8Array);
    expect(digest.byteLength).toBe(32);
    expect(hex(digest)).toBe(reference(data));
    expect(hex(data)).toBe(before);
  });

  it("gives every call its own digest: a kept one does not change with later calls", async () => {
    const first = await crypto.sha256(new Uint8Array([1]));
    const kept = hex(first);
    await crypto.sha256(new Uint8Array([2]));
    expect(hex(first)).toBe(kept);
  });
});
