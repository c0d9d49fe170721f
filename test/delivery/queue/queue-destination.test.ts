/** The queue destination's schema, XADD arguments and outcome mapping (pure, table-driven). */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { buildStreamEntry, toXaddArguments } from "../../../src/delivery/queue/build-stream-entry.ts";
import { QueueDestinationSchema } from "../../../src/delivery/queue/queue-destination-schema.ts";
import { toQueueAttemptResult } from "../../../src/delivery/queue/queue-sink.ts";
import type { StreamAppendResult } from "../../../src/delivery/queue/stream-transport.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";

const base = { id: "jobs", type: "queue", url: "redis://127.0.0.1:6379", stream: "events" };

describe("QueueDestinationSchema", () => {
  it("applies the documented defaults", () => {
    expect(v.parse(QueueDestinationSchema, base)).toEqual({
      ...base,
      driver: "redis-streams",
      maxLen: 100_000,
      timeoutMs: 5_000,
    });
  });

  it.each([
    ["rediss with credentials and db", { url: "rediss://user:pw@redis.internal:6380/2" }, true],
    ["password-only credentials", { url: "redis://:pw@127.0.0.1:6379" }, true],
    ["http url", { url: "http://127.0.0.1:6379" }, false],
    ["no scheme", { url: "127.0.0.1:6379" }, false],
    ["empty stream", { stream: "" }, false],
    ["maxLen zero", { maxLen: 0 }, false],
    ["fractional maxLen", { maxLen: 10.5 }, false],
    ["timeout too small", { timeoutMs: 10 }, false],
    ["unknown driver", { driver: "kafka" }, false],
    ["delivery policy", { retry: { schedule: [1, 60] }, concurrency: 2, ordering: "subject" }, true],
    ["invalid delivery policy", { concurrency: 0 }, false],
    ["unknown key", { maxlen: 10 }, false],
  ])("%s", (_, patch, valid) => {
    expect(v.safeParse(QueueDestinationSchema, { ...base, ...patch }).success).toBe(valid);
  });
});

describe("XADD arguments", () => {
  it("bounds the stream with approximate trimming and an auto-generated entry id", () => {
    const record = makeTestRecord({ type: "agreement.declined" });
    const args = toXaddArguments(buildStreamEntry({ stream: "events", maxLen: 500 }, record));
    expect(args.slice(0, 5)).toEqual(["events", "MAXLEN", "~", "500", "*"]);
    expect(args.slice(5, 9)).toEqual(["id", record.id, "type", "agreement.declined"]);
    expect(args.at(-2)).toBe("payload");
    expect(JSON.parse(args.at(-1) as string)).toEqual(record.event);
  });
});

describe("outcome mapping", () => {
  it.each<[string, StreamAppendResult, { ok: boolean; permanent?: boolean; error?: RegExp }]>([
    ["appended", { ok: true, entryId: "1-0" }, { ok: true }],
    [
      "refused connection",
      { ok: false, failure: "unreachable", detail: "ECONNREFUSED" },
      { ok: false, error: /ECONNREFUSED/ },
    ],
    ["timeout", { ok: false, failure: "timeout", detail: "5000 ms" }, { ok: false, error: /timed out/ }],
    ["aborted", { ok: false, failure: "aborted", detail: "signal" }, { ok: false, error: /aborted/ }],
    ["loading", { ok: false, failure: "reply", detail: "LOADING" }, { ok: false, error: /LOADING/ }],
    ["out of memory", { ok: false, failure: "reply", detail: "OOM" }, { ok: false, error: /OOM/ }],
    [
      "wrong type",
      { ok: false, failure: "reply", detail: "WRONGTYPE" },
      { ok: false, permanent: true, error: /WRONGTYPE/ },
    ],
  ])("%s", (_, outcome, expected) => {
    const result = toQueueAttemptResult(outcome);
    expect(result.ok).toBe(expected.ok);
    expect(result.permanent).toBe(expected.permanent);
    if (expected.error) expect(result.error).toMatch(expected.error);
    else expect(result.error).toBeUndefined();
  });
});
