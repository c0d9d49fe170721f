/**
 * The live hub conformance suite against the `upstash` hub driver (the journal, polled) over the
 * `upstash` store, through an Upstash REST front in front of a real redis-server; plus a
 * subscriber hearing, in seq order, what another instance appended without any wake-up.
 */
import { describe, expect, it } from "vitest";
import { upstashHub } from "../../../adapters/hub/upstash.ts";
import { upstashStore } from "../../../adapters/store/upstash/upstash-store.ts";
import { testHubDriver } from "../../conformance/hub-conformance.ts";
import { waitFor } from "../../delivery/helpers/webhook-receiver.ts";
import { appendRecords, journalHubHarness } from "../../helpers/journal-hub-harness.ts";
import { upstashFrontForFile } from "../../helpers/upstash-server.ts";

const front = upstashFrontForFile();
let n = 0;

const openStore = (prefix: string) => upstashStore({ url: front().url, token: front().token, prefix });

testHubDriver(
  "upstash",
  journalHubHarness({ openStore: () => openStore(`h${++n}`), openHub: (journal) => upstashHub({ journal }) }),
);

describe("upstash hub across instances", () => {
  it("hands a subscriber on one instance what another appended, in seq order", async () => {
    const prefix = `x${++n}`;
    const [storeA, storeB] = await Promise.all([openStore(prefix), openStore(prefix)]);
    const hubA = await upstashHub({ journal: storeA, pollMs: 50 });
    try {
      const heard: number[] = [];
      hubA.subscribe((record) => heard.push(record.seq));
      const seqs = await appendRecords(storeB, 5);
      await waitFor("the other instance's appends", () => heard.length >= seqs.length, 10_000);
      expect(heard).toEqual(seqs);
    } finally {
      await hubA.close();
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });
});
