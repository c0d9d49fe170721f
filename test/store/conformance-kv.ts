/**
 * Conformance: small shared values with a TTL (token cache), set-if-absent as a lock, delete,
 * and keys kept exactly as given.
 */
import { describe, expect, it } from "vitest";
import type { StoreHarness } from "../conformance/store-conformance.ts";

const TTL = 60_000;

export function describeKvConformance(h: StoreHarness): void {
  describe("kv", () => {
    it("gets what was set until the TTL ends, then nothing", async () => {
      expect(await h.store.kvGet("token:esign")).toBeUndefined();
      await h.store.kvSet("token:esign", "eyJ.first", TTL);
      expect(await h.store.kvGet("token:esign")).toBe("eyJ.first");
      await h.store.kvSet("token:esign", "eyJ.second", TTL);
      expect(await h.store.kvGet("token:esign")).toBe("eyJ.second");
      h.advance(TTL - 1);
      expect(await h.store.kvGet("token:esign")).toBe("eyJ.second");
      h.advance(1);
      expect(await h.store.kvGet("token:esign")).toBeUndefined();
    });

    it("restarts the TTL when a value is set again", async () => {
      await h.store.kvSet("k", "1", TTL);
      h.advance(TTL - 10);
      await h.store.kvSet("k", "2", TTL);
      h.advance(TTL - 1);
      expect(await h.store.kvGet("k")).toBe("2");
    });

    it("deletes a value, and deleting a missing key is harmless", async () => {
      await h.store.kvSet("k", "v", TTL);
      await h.store.kvDelete("k");
      expect(await h.store.kvGet("k")).toBeUndefined();
      await h.store.kvDelete("never-set");
    });

    it("sets if absent: true when absent, false when held, true again after expiry or delete", async () => {
      expect(await h.store.kvSetIfAbsent("lock:refresh", "a", TTL)).toBe(true);
      expect(await h.store.kvSetIfAbsent("lock:refresh", "b", TTL)).toBe(false);
      expect(await h.store.kvGet("lock:refresh")).toBe("a");
      h.advance(TTL);
      expect(await h.store.kvSetIfAbsent("lock:refresh", "c", TTL)).toBe(true);
      expect(await h.store.kvGet("lock:refresh")).toBe("c");
      await h.store.kvDelete("lock:refresh");
      expect(await h.store.kvSetIfAbsent("lock:refresh", "d", TTL)).toBe(true);
    });

    it("grants a lock to exactly one of 200 concurrent takers", async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => h.store.kvSetIfAbsent("lock:token", `owner-${i}`, TTL)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await h.store.kvGet("lock:token")).toBe(`owner-${results.indexOf(true)}`);
    });

    it("keeps keys exactly as given and values byte for byte", async () => {
      const keys = ["a/b", "a:b", "a::b", "a?b", "a", "a b", "../x", "Ä-ключ-🔑", "x".repeat(300), ":lead"];
      for (const [i, key] of keys.entries()) await h.store.kvSet(key, `value-${i}`, TTL);
      for (const [i, key] of keys.entries()) expect(await h.store.kvGet(key)).toBe(`value-${i}`);
      const value = `line one\nline two\u2028 "quoted" \\ ${"é".repeat(40_000)} 🔐`;
      await h.store.kvSet("big", value, TTL);
      expect(await h.store.kvGet("big")).toBe(value);
    });
  });
}
