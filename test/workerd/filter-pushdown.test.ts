/**
 * Filter pushdown in the Durable Object store, inside workerd: each shard runs the filter's SQL
 * translation (`json_type` / `json_extract` / `json_each`) in its own SQLite, so `list` with a
 * filter answers only matching events of both services, newest first, with exact cursors across
 * three shards; a filter that cannot be translated whole is finished in memory by `listMatching`.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDurableObjectStore } from "../../adapters/cloudflare/durable-object-store.ts";
import { createEventFilter } from "../../src/filters/event-filter.ts";
import { parseFilter } from "../../src/filters/parse-filter.ts";
import type { EventRecord, StoreDriver } from "../../src/store/contract.ts";
import { listMatching } from "../../src/store/list-matching.ts";
import { keyOf, makeRecord, T0 } from "../store/sample-records.ts";

function node(filter: unknown) {
  const parsed = parseFilter(filter);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.node;
}

async function seed(): Promise<{ store: StoreDriver; records: EventRecord[] }> {
  const store = createDurableObjectStore({ namespace: env.GATEWAY_STORE, shards: 3, prefix: crypto.randomUUID() });
  const records: EventRecord[] = [];
  for (let n = 1; n <= 12; n++) {
    const staffing = n % 3 === 0;
    const record = makeRecord(n, {
      sourceId: staffing ? "staffing" : n % 2 === 0 ? "esign-eu" : "esign",
      type: staffing ? "candidate.accepted" : n % 4 === 1 ? "agreement.declined" : "agreement.completed",
      receivedAt: T0 + n * 1000,
    });
    if (staffing) (record.event.data as { result: { confidence: number } }).result.confidence = n / 12;
    await store.append(record, keyOf(record), 3_600_000);
    records.push({ ...record, seq: 0 });
  }
  return { store, records };
}

async function walk(store: StoreDriver, filter: unknown, viaListMatching = false): Promise<string[]> {
  const ids: string[] = [];
  let after: number | undefined;
  do {
    const query = { filter: node(filter), limit: 2, after };
    const page = viaListMatching ? await listMatching(store, query) : await store.list(query);
    ids.push(...page.events.map((e) => e.id));
    after = page.next ?? undefined;
  } while (after !== undefined);
  return ids;
}

const expected = (records: EventRecord[], filter: unknown) => {
  const compiled = createEventFilter(node(filter));
  return records
    .filter((r) => compiled.matchesRecord(r))
    .map((r) => r.id)
    .reverse();
};

describe("durable-object store: filters pushed down to the shards' SQLite", () => {
  it("answers exactly the matching events, newest first, with cursors across shards", async () => {
    const { store, records } = await seed();
    expect(store.filterPushdown).toBe(true);
    const filters = [
      { data: { result: { confidence: { $gte: 0.5 } } } },
      {
        type: { $startsWith: "agreement." },
        data: { participants: { status: "signed", email: { $contains: "anna" } } },
      },
      { $or: [{ type: "agreement.declined" }, { data: { result: { confidence: { $lt: 0.3 } } } }] },
      { $not: { source: { $endsWith: "/esign" } }, headers: { "content-type": "application/json" } },
    ];
    for (const filter of filters) {
      const want = expected(records, filter);
      expect(want.length).toBeGreaterThan(0);
      expect(want.length).toBeLessThan(records.length);
      // store.list itself: only the SQL in the shards narrows, so a match here is the pushdown's.
      expect(await walk(store, filter)).toEqual(want);
    }
  });

  it("a filter the SQL cannot express whole is finished in memory with the same answer", async () => {
    const { store, records } = await seed();
    const filter = { type: "agreement.completed", data: { 'odd"key': { $exist: false } } };
    expect(createEventFilter(node(filter)).sql.exact).toBe(false);
    expect(await walk(store, filter, true)).toEqual(expected(records, filter));
    // More bound parameters than a Durable Object statement takes: evaluated in memory, same answer.
    const wide = {
      sourceId: { $exist: false },
      source: { $in: Array.from({ length: 99 }, (_, i) => `/webhooks/s${i}`).concat("/webhooks/staffing") },
    };
    expect(createEventFilter(node(wide)).sql.exact).toBe(false);
    expect(await walk(store, wide, true)).toEqual(expected(records, wide));
  });
});
