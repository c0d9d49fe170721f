/**
 * The `postgres` store's connections: the dedupe claims run on half of `poolSize` (sessions
 * with `synchronous_commit = off`), the appends and reads on the other half, so one store never
 * holds more than `poolSize` connections; with `poolSize` 1 the claims share the one connection.
 */
import { describe, expect, it } from "vitest";
import { postgresStore } from "../../adapters/store/postgres/postgres-store.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { usePostgresServer } from "../helpers/postgres-server.ts";

const db = usePostgresServer();

/** The gateway's sessions open on the server now. */
async function gatewaySessions(): Promise<number> {
  const { rows } = await db.admin.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'gateway'",
  );
  return Number(rows[0]?.n);
}

const record = (n: number): EventRecord => ({
  id: `evt_pool_${n}`,
  seq: 0,
  sourceId: "esign",
  identity: `pool-${n}`,
  receivedAt: 1_700_000_000_000 + n,
  event: {
    specversion: "1.0",
    id: `evt_pool_${n}`,
    source: "/webhooks/esign",
    type: "agreement.signed",
    time: "2026-11-26T00:00:00.000Z",
    datacontenttype: "application/json",
    data: {},
    service: "esign",
    upstreamid: `pool-${n}`,
    upstreamidkind: "event_id",
    receivedtime: "2026-11-26T00:00:00.000Z",
  },
  rawBody: "{}",
  rawBodyEncoding: "utf8",
  headers: {},
  marks: [],
});

describe("postgres store connections", () => {
  for (const poolSize of [1, 2, 4]) {
    it(`holds at most poolSize ${poolSize} connections under 60 concurrent claims and appends, none after close`, async () => {
      const store = await postgresStore({ url: db.server.url, schema: `pools${poolSize}`, poolSize });
      let peak = 0;
      try {
        const results = await Promise.all(
          Array.from({ length: 60 }, async (_, i) => {
            const key = `esign\u0000pool-${i}`;
            const claim = await store.claim(key, 60_000);
            expect(claim.status).toBe("claimed");
            peak = Math.max(peak, await gatewaySessions());
            return store.append(record(i), key, 3_600_000);
          }),
        );
        expect(results.every((r) => r.inserted)).toBe(true);
        expect(new Set(results.map((r) => r.seq)).size).toBe(60);
        // The claims were replaced by the marks the appends committed.
        expect(await store.claim("esign\u0000pool-7", 60_000)).toEqual({ status: "duplicate", id: "evt_pool_7" });
        peak = Math.max(peak, await gatewaySessions());
      } finally {
        await store.close();
      }
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(poolSize);
      // A closed connection's backend leaves pg_stat_activity as it exits: wait for that (bounded).
      let left = await gatewaySessions();
      for (let i = 0; i < 200 && left > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        left = await gatewaySessions();
      }
      expect(left).toBe(0);
    }, 60_000);
  }
});
