/**
 * Lanes: per-subject ordering under retries (a failing head holds back only its own subject),
 * isolation of a slow destination from a fast one, the concurrency limit and the rate limit.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startInProcessGateway } from "./helpers/in-process-gateway.ts";
import { type ReceivedRequest, startWebhookReceiver, waitFor } from "./helpers/webhook-receiver.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

const subjectOf = (r: ReceivedRequest) => (JSON.parse(r.body) as { subject: string }).subject;

/** Fails the first `n` requests of subject `agreements/A`, answers 200 otherwise. */
function failingHead(n: number) {
  let failed = 0;
  return (r: ReceivedRequest) => {
    if (subjectOf(r) === "agreements/A" && failed < n) {
      failed++;
      return { status: 503 };
    }
    return { status: 200 };
  };
}

describe("per-subject ordering", () => {
  it("a failing head holds back its own subject only, and order survives its retries", async () => {
    const receiver = await startWebhookReceiver(failingHead(2));
    const gw = await startInProcessGateway({ destinations: [{ id: "a", url: receiver.url, ordering: "subject" }] });
    open.push(gw, receiver);
    const a1 = await gw.post("agreement.sent", { subjectId: "A" });
    const a2 = await gw.post("agreement.viewed", { subjectId: "A" });
    const b1 = await gw.post("agreement.sent", { subjectId: "B" });
    const a3 = await gw.post("agreement.completed", { subjectId: "A" });
    expect(receiver.ids()).toEqual([a1, b1]);
    await gw.time.advance(5_000);
    expect(receiver.ids()).toEqual([a1, b1, a1]);
    await gw.time.advance(300_000);
    expect(receiver.ids()).toEqual([a1, b1, a1, a1, a2, a3]);
    const a = receiver.requests.filter((r) => subjectOf(r) === "agreements/A").map((r) => r.headers["webhook-id"]);
    expect(a).toEqual([a1, a1, a1, a2, a3]);
  });

  it("without ordering the others of the subject do not wait", async () => {
    const receiver = await startWebhookReceiver(failingHead(1));
    const gw = await startInProcessGateway({ destinations: [{ id: "a", url: receiver.url }] });
    open.push(gw, receiver);
    const a1 = await gw.post("agreement.sent", { subjectId: "A" });
    const a2 = await gw.post("agreement.viewed", { subjectId: "A" });
    expect(receiver.ids()).toEqual([a1, a2]);
    await gw.time.advance(5_000);
    expect(receiver.ids()).toEqual([a1, a2, a1]);
  });
});

describe("lanes", () => {
  it("a slow destination neither delays a fast one nor gets more than its concurrency at once", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startWebhookReceiver(() => ({ status: 200, after: released }));
    const fast = await startWebhookReceiver();
    const gw = await startInProcessGateway({
      destinations: [
        { id: "slow", url: slow.url, concurrency: 3 },
        { id: "fast", url: fast.url },
      ],
    });
    open.push(slow, fast);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await gw.post("agreement.sent", { settle: false }));
    await waitFor("the fast destination to get every event", () => fast.requests.length === 12);
    expect([...fast.ids()].sort()).toEqual([...ids].sort());
    await waitFor("the slow destination to hold its three attempts", () => slow.requests.length === 3);
    expect(slow.requests).toHaveLength(3);
    release();
    await gw.engine.settled();
    expect([...slow.ids()].sort()).toEqual([...ids].sort());
    await gw.close();
  });

  it("keeps to the rate limit", async () => {
    const receiver = await startWebhookReceiver();
    const gw = await startInProcessGateway({ destinations: [{ id: "a", url: receiver.url, rateLimitPerSecond: 2 }] });
    open.push(gw, receiver);
    for (let i = 0; i < 5; i++) await gw.post();
    expect(receiver.requests).toHaveLength(2);
    await gw.time.advance(499);
    expect(receiver.requests).toHaveLength(2);
    await gw.time.advance(1);
    expect(receiver.requests).toHaveLength(3);
    await gw.time.advance(1000);
    expect(receiver.requests).toHaveLength(5);
  });
});
