/**
 * What every sink shares (createSink): a transport that throws, synchronously or by rejecting,
 * is a retryable failure named by the transport and the error's class only (never its message,
 * which may carry a URL or a secret); no attempt after `close` or on an aborted signal; `close`
 * is idempotent and never rejects.
 */
import { describe, expect, it } from "vitest";
import { createSink, type DeliverableRecord } from "../../src/delivery/sink-contract.ts";

const record = { id: "evt_1" } as DeliverableRecord;
const live = new AbortController().signal;

describe("createSink", () => {
  it("turns a synchronous throw and a rejection into a retryable failure without the message", async () => {
    const throwing = createSink(
      "d",
      "http",
      () => {
        throw new TypeError("https://user:secret@example.com");
      },
      async () => {},
    );
    const rejecting = createSink(
      "d",
      "smtp",
      () => Promise.reject(new RangeError("secret")),
      async () => {},
    );
    const failedSync = await throwing.deliver(record, live);
    const failedAsync = await rejecting.deliver(record, live);
    expect(failedSync).toEqual({ ok: false, error: "http transport failed (TypeError)" });
    expect(failedAsync).toEqual({ ok: false, error: "smtp transport failed (RangeError)" });
    expect(JSON.stringify([failedSync, failedAsync])).not.toContain("secret");
  });

  it("passes the transport's result through, and attempts nothing once closed or aborted", async () => {
    let attempts = 0;
    let closes = 0;
    const sink = createSink(
      "d",
      "http",
      async (_record, _signal, info) => {
        attempts++;
        return { ok: true, status: 200 + (info?.attempt ?? 0) };
      },
      async () => {
        closes++;
        throw new Error("close failed");
      },
    );
    expect(await sink.deliver(record, live, { attempt: 4 })).toEqual({ ok: true, status: 204 });
    const aborted = new AbortController();
    aborted.abort();
    expect(await sink.deliver(record, aborted.signal)).toEqual({ ok: false, error: "attempt aborted" });
    await Promise.all([sink.close(), sink.close()]);
    expect(await sink.deliver(record, live)).toEqual({ ok: false, error: "sink closed" });
    expect({ attempts, closes }).toEqual({ attempts: 1, closes: 1 });
  });
});
