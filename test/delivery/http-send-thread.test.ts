/**
 * The `http` sink's two Node transports: the send thread (http-send-thread.ts, with
 * GATEWAY_HTTP_SEND_THREAD=on) and the in-thread one (the default). The shared sink conformance suite
 * runs against both here (http.test.ts runs it, and every other http sink test, against the
 * default); then what only the thread has: many attempts of one turn go in one batch and arrive signed byte for byte as built,
 * a crashed thread fails its attempts in flight as network errors (which the lane retries) and the
 * next attempt starts a new thread, closing one destination's transport leaves the others, and the
 * thread keeps a process alive exactly while an attempt is in flight.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { httpWebhookSink, sendsOffMainThread } from "../../adapters/sink/http.ts";
import { sendThread } from "../../adapters/sink/http-send-thread.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { makeTestRecord, testSinkDriver } from "../conformance/sink-conformance.ts";
import { closedPort, httpSinkFixture } from "./helpers/http-sink-fixture.ts";

const { secret, receiver, destination, keep } = httpSinkFixture();
const signal = () => new AbortController().signal;

function sink(input: Record<string, unknown>, inThread = false): Sink {
  return keep(httpWebhookSink(destination(input), { inThread }));
}

/** Waits for an observable condition (bounded by the test's timeout). */
async function waitUntil(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const shared = await receiver();
const unreachable = `http://127.0.0.1:${await closedPort()}/hook`;

for (const inThread of [true, false])
  testSinkDriver(
    `http (signed webhook, ${inThread ? "in-thread transport" : "send thread"})`,
    (kind) =>
      httpWebhookSink(
        destination({ url: kind === "reachable" ? shared.url : unreachable, allowPrivateNetworks: true }),
        { inThread },
      ),
    async (eventId) =>
      shared.requests
        .filter((r) => r.headers["webhook-id"] === eventId)
        .map((r) => ({ eventId, type: (JSON.parse(r.body) as { type: string }).type })),
  );

describe("the send thread", () => {
  it("is chosen by GATEWAY_HTTP_SEND_THREAD=on; off, unset or empty keep the main thread; another value throws", () => {
    expect(sendsOffMainThread({})).toBe(false);
    expect(sendsOffMainThread({ GATEWAY_HTTP_SEND_THREAD: "" })).toBe(false);
    expect(sendsOffMainThread({ GATEWAY_HTTP_SEND_THREAD: "off" })).toBe(false);
    expect(sendsOffMainThread({ GATEWAY_HTTP_SEND_THREAD: "on" })).toBe(true);
    expect(() => sendsOffMainThread({ GATEWAY_HTTP_SEND_THREAD: "yes" })).toThrow(
      "GATEWAY_HTTP_SEND_THREAD: expected on or off, received yes",
    );
  });

  it("sends a turn's attempts in one batch; each arrives with the bytes signed and verifies", async () => {
    const target = await receiver();
    const records = Array.from({ length: 64 }, (_, n) => makeTestRecord({ type: `agreement.t${n}` }));
    const threaded = sink({ url: target.url, allowCidrs: ["127.0.0.1/32"] });
    const before = { ...sendThread().posted };
    const results = await Promise.all(records.map((record) => threaded.deliver(record, signal())));
    // 64 sends made in one turn: one message (two if the thread's start split them).
    expect(sendThread().posted.sends - before.sends).toBe(64);
    expect(sendThread().posted.messages - before.messages).toBeLessThanOrEqual(2);
    for (const result of results) expect(result).toMatchObject({ ok: true, status: 200 });
    expect(target.requests).toHaveLength(64);
    const verifier = new Webhook(secret);
    for (const request of target.requests) {
      const verified = verifier.verify(request.raw.toString("utf8"), request.headers) as { id: string; type: string };
      const record = records.find((r) => r.id === request.headers["webhook-id"]);
      expect(verified.id).toBe(record?.event.id);
      expect(verified.type).toBe(record?.event.type);
      expect(request.headers["content-type"]).toBe("application/cloudevents+json; charset=utf-8");
    }
  });

  it("a crash fails the attempts in flight as network errors, and the next attempt goes through a new thread", async () => {
    let release: (value?: unknown) => void = () => {};
    const held = new Promise((resolve) => {
      release = resolve;
    });
    const target = await receiver(() => ({ status: 200, after: held }));
    const threaded = sink({ url: target.url, allowPrivateNetworks: true });
    const other = sink({ url: shared.url, allowPrivateNetworks: true });
    const inFlight = [threaded.deliver(makeTestRecord(), signal()), threaded.deliver(makeTestRecord(), signal())];
    await waitUntil(() => target.requests.length === 2);
    await sendThread().crashForTest();
    for (const result of await Promise.all(inFlight)) {
      expect(result).toMatchObject({ ok: false, error: "network error (the send thread stopped)" });
      expect(result.permanent).toBeUndefined();
    }
    release();
    // Both destinations' transports were made again in the new thread.
    const again = makeTestRecord();
    expect(await threaded.deliver(again, signal())).toMatchObject({ ok: true, status: 200 });
    expect(target.ids()).toContain(again.id);
    expect(await other.deliver(makeTestRecord(), signal())).toMatchObject({ ok: true, status: 200 });
  });

  it("closing one destination's transport leaves the others delivering; a closed sink sends nothing", async () => {
    const first = sink({ url: shared.url, allowPrivateNetworks: true });
    const second = sink({ url: shared.url, allowPrivateNetworks: true });
    expect(await first.deliver(makeTestRecord(), signal())).toMatchObject({ ok: true });
    await first.close();
    const before = shared.requests.length;
    expect(await first.deliver(makeTestRecord(), signal())).toMatchObject({ ok: false, error: "sink closed" });
    expect(shared.requests).toHaveLength(before);
    expect(await second.deliver(makeTestRecord(), signal())).toMatchObject({ ok: true, status: 200 });
  });

  it("the SSRF guard runs in the thread: loopback is refused without allowing it, before any request", async () => {
    const target = await receiver();
    const refused = await sink({ url: target.url.replace("127.0.0.1", "localhost") }).deliver(
      makeTestRecord(),
      signal(),
    );
    expect(refused).toMatchObject({ ok: false, permanent: true });
    expect(refused.error).toMatch(/^refused by the SSRF guard/);
    expect(target.requests).toHaveLength(0);
  });

  /** Runs `script` (an ES module importing the http sink) in a child process; resolves with its stdout once it exits. */
  async function runChild(script: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "send-thread-"));
    const file = join(dir, "child.mjs");
    await writeFile(file, script);
    // The bound only stops a child that never exits from outliving the test (the failure it catches).
    return new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["--import", "tsx", file], { timeout: 100_000 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    ).finally(() => rm(dir, { recursive: true, force: true }));
  }
  const sinkModule = JSON.stringify(fileURLToPath(new URL("../../adapters/sink/http.ts", import.meta.url)));
  const threadedSinkIn = (url: string) =>
    `httpWebhookSink(${JSON.stringify(destination({ url, allowPrivateNetworks: true }))}, { inThread: false })`;

  it("an attempt in flight keeps a process alive until its answer, as its socket did in-thread", async () => {
    let release: (value?: unknown) => void = () => {};
    const held = new Promise((resolve) => {
      release = resolve;
    });
    // The first attempt is answered at once (the thread is idle, unref'd, after it); the second is held.
    const target = await receiver((request) => ({ status: 202, after: request.n === 1 ? undefined : held }));
    // A process whose only pending work, once its first attempt is answered, is one attempt on the send thread.
    const child = runChild(`
      const { httpWebhookSink } = await import(${sinkModule});
      const sink = ${threadedSinkIn(target.url)};
      const record = (id) => ({ id, event: { id, type: "agreement.signed" }, headers: {} });
      console.log(JSON.stringify(await sink.deliver(record("evt_first"), new AbortController().signal)));
      sink.deliver(record("evt_keepalive"), new AbortController().signal).then((result) => console.log(JSON.stringify(result)));
    `);
    // Without the thread's ref the child ends before its second request is answered (or sent).
    let exited = false;
    void child.then(
      () => (exited = true),
      () => (exited = true),
    );
    await waitUntil(() => target.requests.length === 2 || exited);
    release();
    const lines = (await child).trim().split("\n");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { ok: true, status: 202 },
      { ok: true, status: 202 },
    ]);
    expect(target.ids()).toEqual(["evt_first", "evt_keepalive"]);
  }, 120_000);

  it("an idle send thread does not keep a process alive", async () => {
    // The thread starts with the transport; nothing is sent, so the child's work ends at once.
    const out = await runChild(`
      const { httpWebhookSink } = await import(${sinkModule});
      ${threadedSinkIn(unreachable)};
      console.log("opened");
    `);
    expect(out.trim()).toBe("opened");
  }, 120_000);
});
