/**
 * Conformance: claiming an upstream identity (in progress, expiry, duplicate within the dedupe
 * window, release) and the one-winner guarantee under concurrent claims.
 */
import { describe, expect, it } from "vitest";
import type { StoreHarness } from "../conformance/store-conformance.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const CLAIM_TTL = 30_000;
const WINDOW = 72 * 3600_000;

export function describeClaimConformance(h: StoreHarness): void {
  describe("claim", () => {
    it("claims a new identity once and answers in_progress while the claim is unexpired", async () => {
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "claimed" });
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "in_progress" });
      h.advance(CLAIM_TTL - 1);
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "in_progress" });
    });

    it("lets a retry claim again once the claim expired (a crash between claim and append)", async () => {
      await h.store.claim("esign\u0000a", CLAIM_TTL);
      h.advance(CLAIM_TTL);
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "claimed" });
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "in_progress" });
    });

    it("keeps identities apart, also across sources", async () => {
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "claimed" });
      expect(await h.store.claim("esign\u0000b", CLAIM_TTL)).toEqual({ status: "claimed" });
      expect(await h.store.claim("staffing\u0000a", CLAIM_TTL)).toEqual({ status: "claimed" });
    });

    it("answers duplicate with the event id after the append, for the whole dedupe window", async () => {
      const record = makeRecord(1);
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "claimed" });
      await h.store.append(record, keyOf(record), WINDOW);
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "duplicate", id: record.id });
      h.advance(WINDOW - 1);
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "duplicate", id: record.id });
      h.advance(1);
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "claimed" });
    });

    it("starts the dedupe window at the append, not at the claim", async () => {
      const record = makeRecord(1);
      await h.store.claim(keyOf(record), CLAIM_TTL);
      h.advance(20_000);
      await h.store.append(record, keyOf(record), 60_000);
      h.advance(59_999);
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "duplicate", id: record.id });
    });

    it("release drops a claim so the next request claims at once", async () => {
      await h.store.claim("esign\u0000a", CLAIM_TTL);
      await h.store.release("esign\u0000a");
      expect(await h.store.claim("esign\u0000a", CLAIM_TTL)).toEqual({ status: "claimed" });
      await h.store.release("esign\u0000never-claimed");
    });

    it("release after the append keeps the duplicate mark", async () => {
      const record = makeRecord(1);
      await h.store.claim(keyOf(record), CLAIM_TTL);
      await h.store.append(record, keyOf(record), WINDOW);
      await h.store.release(keyOf(record));
      expect(await h.store.claim(keyOf(record), CLAIM_TTL)).toEqual({ status: "duplicate", id: record.id });
    });

    it("gives exactly one of 200 concurrent claims of one identity", async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, () => h.store.claim("staffing\u0000del-1", CLAIM_TTL)),
      );
      expect(results.filter((r) => r.status === "claimed")).toHaveLength(1);
      expect(results.filter((r) => r.status === "in_progress")).toHaveLength(199);
    });

    it("gives exactly one claim per identity when 200 identities are claimed twice concurrently", async () => {
      const keys = Array.from({ length: 200 }, (_, i) => `esign\u0000evt-${i}`);
      const results = await Promise.all([...keys, ...keys].map((key) => h.store.claim(key, CLAIM_TTL)));
      expect(results.filter((r) => r.status === "claimed")).toHaveLength(200);
    });
  });
}
