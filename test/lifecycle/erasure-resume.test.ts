/**
 * The erasure policy's crash safety, on the memory store with a store that fails in the middle
 * (the end-to-end kill -9 tests are in erasure-kill-9.test.ts): an erasure whose
 * store stops between two pages is finished by `resumeErasures` with the full count and one
 * audit event, also for a content filter (whose tombstones no longer match it), and its pending
 * request is gone afterwards; the same selection asked again answers the first audit.
 */
import { describe, expect, test } from "vitest";
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { eraseEvents, resumeErasures } from "../../src/lifecycle/erase-events.ts";
import { type EventRecord, type StoreDriver, toDedupeKey } from "../../src/store/contract.ts";
import { isErased } from "../../src/store/erased-event.ts";

const COUNT = 450;

function record(n: number, email: string): EventRecord {
  const id = `evt_${n.toString(16).padStart(32, "0")}`;
  const data = { agreement_id: "ag-1", participant: { email } };
  return {
    id,
    seq: 0,
    sourceId: "esign",
    identity: `i-${n}`,
    receivedAt: Date.now(),
    event: {
      specversion: "1.0",
      id,
      source: "/esign",
      type: "agreement.signed",
      subject: "agreements/ag-1",
      time: new Date().toISOString(),
      data,
    } as EventRecord["event"],
    rawBody: JSON.stringify(data),
    rawBodyEncoding: "utf8",
    headers: {},
    marks: [],
  };
}

async function filled(email: string): Promise<StoreDriver> {
  const store = memoryStore();
  for (let n = 0; n < COUNT; n++) {
    const r = record(n, email);
    await store.append(r, toDedupeKey(r.sourceId, r.identity), 3_600_000);
  }
  return store;
}

/**
 * The store, with `redactEvents` failing from its `failAt`-th call on (the process "dies"),
 * before that call's writes or, with `afterWriting`, once they are made.
 */
function failingAt(store: StoreDriver, failAt: number, afterWriting = false): StoreDriver {
  let calls = 0;
  return Object.assign(Object.create(store) as StoreDriver, {
    redactEvents: async (records: readonly EventRecord[]) => {
      calls++;
      if (calls < failAt) return store.redactEvents(records);
      if (afterWriting) await store.redactEvents(records);
      throw new Error("the process died");
    },
  });
}

const deps = (store: StoreDriver) => ({
  store,
  crypto: createWebCrypto(),
  clock: { now: () => Date.now() },
  hub: inProcessHub(),
});

async function audits(store: StoreDriver) {
  return (await store.list({ sourceId: "gateway", type: "gateway.events.erased", limit: 100 })).events;
}

async function erasedCount(store: StoreDriver): Promise<number> {
  const page = await store.list({ sourceId: "esign", limit: 500 });
  return page.events.filter(isErased).length;
}

describe.each([
  ["subject", { subject: "agreements/ag-1" }],
  ["filter", { filter: { data: { participant: { email: "anna@erase.example" } } } }],
] as const)("an erasure by %s interrupted between pages", (_name, selection) => {
  test("is finished at the next start: all erased, audited once with the full count", async () => {
    const store = await filled("anna@erase.example");
    const actor = "admin key sha256:0123456789ab…";
    // The first page (200) is erased, the second fails: the process "died" there.
    await expect(eraseEvents(deps(failingAt(store, 2)), selection, { dryRun: false, actor })).rejects.toThrow(
      "the process died",
    );
    expect(await erasedCount(store)).toBe(200);
    expect(await audits(store)).toHaveLength(0);
    // The request is recorded (with its selection) until it is finished.
    expect(await store.kvGet("lifecycle:erasures")).toContain("hmac-sha256:");

    expect(await resumeErasures(deps(store))).toBe(1);
    expect(await erasedCount(store)).toBe(COUNT);
    const recorded = await audits(store);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.event.data).toMatchObject({ by: actor, events: COUNT, already_erased: 0, resumed: true });
    expect(JSON.stringify(recorded[0])).not.toContain("anna@erase.example");
    // Nothing left to finish, and the request (which held the filter's value) is gone.
    expect(await store.kvGet("lifecycle:erasures")).toBeUndefined();
    expect(await resumeErasures(deps(store))).toBe(0);

    const again = await eraseEvents(deps(store), selection, { dryRun: false, actor });
    expect(again).toMatchObject({ events: 0, audit_event_id: recorded[0]?.id });
    expect(await audits(store)).toHaveLength(1);
  });
});

test("a crash after the tombstones of a page but before its progress is counted once", async () => {
  const store = await filled("bo@erase.example");
  // Dies once the third page's tombstones are written, before its count is: the intent recorded
  // before the page tells the restart which events were this request's.
  await expect(
    eraseEvents(deps(failingAt(store, 3, true)), { subject: "agreements/ag-1" }, { dryRun: false, actor: "a" }),
  ).rejects.toThrow();
  expect(await erasedCount(store)).toBe(COUNT);
  await resumeErasures(deps(store));
  const [audit] = await audits(store);
  expect(audit?.event.data).toMatchObject({ events: COUNT, already_erased: 0 });
});
