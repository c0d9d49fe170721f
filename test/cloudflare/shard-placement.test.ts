/**
 * The store's shard placement and seq encoding on Workers (adapters/cloudflare/shard-placement.ts):
 * stable placement, unique and increasing seqs, the caller's floor, sealing, and the bound that
 * keeps seqs within the API's 15-digit cursors.
 */
import { describe, expect, it } from "vitest";
import {
  lastSeqOfTick,
  MAX_SHARDS,
  nextSeq,
  shardOf,
  sourceOfDedupeKey,
  tickOf,
} from "../../adapters/cloudflare/shard-placement.ts";

const NOW = Date.UTC(2026, 10, 24, 12);

describe("shard placement", () => {
  it("places a key on the same shard every time, spread over all shards", () => {
    expect(shardOf("esign", 1)).toBe(0);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const shard = shardOf(`source-${i}`, 4);
      expect(shard).toBe(shardOf(`source-${i}`, 4));
      seen.add(shard);
    }
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
    expect(sourceOfDedupeKey("staffing\u0000del-1")).toBe("staffing");
  });

  it("numbers a single shard as a counter that respects the caller's floor", () => {
    const place = { index: 0, count: 1 };
    expect(nextSeq(place, 0, 0, NOW)).toBe(1);
    expect(nextSeq(place, 7, 3, NOW)).toBe(8);
    expect(nextSeq(place, 7, 20, NOW)).toBe(21);
  });

  it("gives unique, per-shard increasing seqs that follow the clock across shards", () => {
    const count = 3;
    const a = nextSeq({ index: 0, count }, 0, 0, NOW);
    const b = nextSeq({ index: 2, count }, 0, 0, NOW);
    expect(a % count).toBe(0);
    expect(b % count).toBe(2);
    expect(tickOf(a, count)).toBe(tickOf(b, count));
    // Faster than the clock: the tick runs ahead; a later clock wins again.
    const a2 = nextSeq({ index: 0, count }, a, 0, NOW);
    expect(a2).toBeGreaterThan(a);
    expect(nextSeq({ index: 1, count }, 0, 0, NOW + 1)).toBeGreaterThan(a2);
    // The caller's floor orders sequential appends through one driver across shards.
    expect(nextSeq({ index: 0, count }, 0, b, NOW)).toBeGreaterThan(b);
  });

  it("numbers after a sealed tick", () => {
    const count = 4;
    const tick = tickOf(nextSeq({ index: 3, count }, 0, 0, NOW), count) + 100;
    const seq = nextSeq({ index: 1, count }, lastSeqOfTick(tick, count), 0, NOW);
    expect(tickOf(seq, count)).toBe(tick + 1);
    expect(seq).toBeGreaterThan(lastSeqOfTick(tick, count));
  });

  it("stays below 10^15 (15-digit cursors) with the most shards until 2149", () => {
    const seq = nextSeq({ index: MAX_SHARDS - 1, count: MAX_SHARDS }, 0, 0, Date.UTC(2149, 0, 1));
    expect(seq).toBeLessThan(1e15);
    expect(Number.isSafeInteger(seq)).toBe(true);
  });
});
