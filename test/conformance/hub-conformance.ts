/**
 * The live hub conformance suite (src/stream/hub-contract.ts): every hub driver runs these same
 * cases from test/drivers/hub/<name>.test.ts. A hub delivers each published record to every
 * subscriber, in publish order; an unsubscribed listener hears nothing more; after `close`
 * nothing is delivered.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import type { LiveHub } from "../../src/stream/hub-contract.ts";
import { makeTestRecord } from "./sink-conformance.ts";

/** Opens a fresh hub. Cross-process drivers deliver asynchronously; `flush` waits for that. */
export interface HubHarness {
  open(): LiveHub | Promise<LiveHub>;
  /** Resolves once every record published so far has reached the subscribers. Default: nothing to wait for. */
  flush?(): Promise<void>;
}

/** Runs the hub contract's cases against one driver. */
export function testHubDriver(name: string, harness: HubHarness): void {
  describe(`live hub conformance: ${name}`, () => {
    const open: LiveHub[] = [];
    const openHub = async () => {
      const hub = await harness.open();
      open.push(hub);
      return hub;
    };
    const flush = () => harness.flush?.() ?? Promise.resolve();
    afterEach(async () => {
      await Promise.all(open.splice(0).map((hub) => hub.close()));
    });

    it("delivers every published record to every subscriber, in publish order", async () => {
      const hub = await openHub();
      const first: string[] = [];
      const second: string[] = [];
      hub.subscribe((record) => first.push(record.id));
      hub.subscribe((record) => second.push(record.id));
      const records: EventRecord[] = [makeTestRecord(), makeTestRecord(), makeTestRecord()];
      for (const record of records) hub.publish(record);
      await flush();
      expect(first).toEqual(records.map((r) => r.id));
      expect(second).toEqual(records.map((r) => r.id));
    });

    it("stops delivering to a listener once it unsubscribed", async () => {
      const hub = await openHub();
      const heard: string[] = [];
      const unsubscribe = hub.subscribe((record) => heard.push(record.id));
      const before = makeTestRecord();
      hub.publish(before);
      await flush();
      unsubscribe();
      hub.publish(makeTestRecord());
      await flush();
      expect(heard).toEqual([before.id]);
    });

    it("delivers nothing after close", async () => {
      const hub = await openHub();
      const heard: string[] = [];
      hub.subscribe((record) => heard.push(record.id));
      await hub.close();
      hub.publish(makeTestRecord());
      await flush();
      expect(heard).toEqual([]);
    });
  });
}
