/**
 * The sink conformance suite: every sink (http, queue, email, ...) runs it against a real
 * destination. A sink delivers a record, a repeat carries the same event id, failures come back
 * as results and never as exceptions, and close is idempotent.
 *
 *   testSinkDriver("queue (redis streams)", makeSink, readDelivered)
 *
 * `makeSink("reachable")` gives a sink whose destination works, `makeSink("unreachable")` one
 * whose destination cannot be reached (a closed loopback port). `readDelivered(eventId)` lists
 * what the destination received for that event id, once `deliver` has resolved.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { toBase64 } from "../../src/encoding/base64.ts";
import type { GatewayEvent } from "../../src/events/envelope.ts";
import type { EventRecord } from "../../src/store/contract.ts";

export type SinkKind = "reachable" | "unreachable";

export interface DeliveredItem {
  /** The gateway event id the destination saw (field, header or Message-ID). */
  eventId: string;
  type: string;
}

export interface TestRecordOptions {
  type?: string;
  /** Default `agreements/agr-1`; null for an event without a subject. */
  subject?: string | null;
  data?: unknown;
  service?: GatewayEvent["service"];
}

/** A recorded event with a fresh gateway id, shaped as the ingress pipeline stores it. */
export function makeTestRecord(options: TestRecordOptions = {}): EventRecord {
  const id = `evt_${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  const service = options.service ?? "esign";
  const receivedAt = Date.now();
  const time = new Date(receivedAt).toISOString();
  const data = options.data ?? {
    event: options.type ?? "agreement.completed",
    agreement_id: "agr-1",
    status: "completed",
  };
  const event: GatewayEvent = {
    specversion: "1.0",
    id,
    source: `/webhooks/${service}`,
    type: options.type ?? "agreement.completed",
    time,
    datacontenttype: "application/json",
    data,
    service,
    upstreamid: `up-${id}`,
    upstreamidkind: service === "esign" ? "event_id" : "delivery-id",
    receivedtime: time,
  };
  const subject = options.subject === undefined ? "agreements/agr-1" : options.subject;
  if (subject !== null) event.subject = subject;
  return {
    id,
    seq: 1,
    sourceId: service,
    identity: event.upstreamid,
    receivedAt,
    event,
    rawBody: toBase64(new TextEncoder().encode(JSON.stringify(data))),
    headers: { "content-type": "application/json" },
    marks: [],
  };
}

/** Registers the conformance tests for one sink implementation. */
export function testSinkDriver(
  name: string,
  makeSink: (kind: SinkKind) => Sink | Promise<Sink>,
  readDelivered: (eventId: string) => Promise<DeliveredItem[]>,
): void {
  describe(`sink conformance: ${name}`, () => {
    const opened: Sink[] = [];
    const open = async (kind: SinkKind) => {
      const sink = await makeSink(kind);
      opened.push(sink);
      return sink;
    };
    const live = () => new AbortController().signal;

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((sink) => sink.close()));
    });

    it("delivers a record and the destination sees its id and type", async () => {
      const sink = await open("reachable");
      const record = makeTestRecord({ type: "agreement.completed" });
      expect(await sink.deliver(record, live())).toMatchObject({ ok: true });
      const delivered = await readDelivered(record.id);
      expect(delivered).toEqual([{ eventId: record.id, type: "agreement.completed" }]);
    });

    it("a repeat carries the same event id, so the consumer can drop it", async () => {
      const sink = await open("reachable");
      const record = makeTestRecord({ type: "candidate.accepted", service: "staffing" });
      expect((await sink.deliver(record, live())).ok).toBe(true);
      expect((await sink.deliver(record, live())).ok).toBe(true);
      const delivered = await readDelivered(record.id);
      expect(delivered.map((d) => d.eventId)).toEqual([record.id, record.id]);
    });

    it("an unreachable destination gives a retryable failure result, not an exception", async () => {
      const sink = await open("unreachable");
      const result = await sink.deliver(makeTestRecord(), live());
      expect(result.ok).toBe(false);
      expect(result.permanent).not.toBe(true);
      expect(result.error).toEqual(expect.any(String));
      expect(result.error?.length).toBeGreaterThan(0);
    });

    it("an already aborted attempt resolves with a failure and delivers nothing", async () => {
      const sink = await open("reachable");
      const record = makeTestRecord();
      const result = await sink.deliver(record, AbortSignal.abort());
      expect(result.ok).toBe(false);
      expect(await readDelivered(record.id)).toEqual([]);
    });

    it("close is idempotent, used or not, and deliver after close still resolves", async () => {
      const unused = await open("reachable");
      await Promise.all([unused.close(), unused.close()]);
      await unused.close();
      const used = await open("reachable");
      expect((await used.deliver(makeTestRecord(), live())).ok).toBe(true);
      await used.close();
      await used.close();
      await expect(used.deliver(makeTestRecord(), live())).resolves.toEqual(expect.any(Object));
    });
  });
}
