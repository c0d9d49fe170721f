/**
 * Retries, dead letters, Retry-After, the circuit breaker and 410, driven by manual time through
 * the real app, the real HTTP sink and real receivers on loopback (no sleeps).
 */
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { type InProcessGateway, startInProcessGateway } from "./helpers/in-process-gateway.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

async function setup(
  responder: Parameters<typeof startWebhookReceiver>[0],
  destination: Record<string, unknown> = {},
): Promise<{ gw: InProcessGateway; receiver: WebhookReceiver }> {
  const receiver = await startWebhookReceiver(responder);
  const gw = await startInProcessGateway({ destinations: [{ id: "a", url: receiver.url, ...destination }] });
  open.push(gw, receiver);
  return { gw, receiver };
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe("retries", () => {
  it("a destination down for three attempts then up gets the event exactly once, attempts logged", async () => {
    const { gw, receiver } = await setup((r) => ({ status: r.n <= 3 ? 503 : 200 }));
    const t0 = gw.time.clock.now();
    const id = await gw.post();
    expect(receiver.requests).toHaveLength(1);
    await gw.time.advance(5 * SECOND);
    expect(receiver.requests).toHaveLength(2);
    await gw.time.advance(5 * MINUTE);
    expect(receiver.requests).toHaveLength(3);
    await gw.time.advance(30 * MINUTE - 1);
    expect(receiver.requests).toHaveLength(3);
    await gw.time.advance(1);
    expect(receiver.requests).toHaveLength(4);
    await gw.time.advance(48 * HOUR);
    expect(receiver.requests).toHaveLength(4);

    // Every attempt is the same message, verifiable with the Standard Webhooks library.
    const wh = new Webhook(gw.whsec);
    for (const request of receiver.requests) {
      expect(request.headers["webhook-id"]).toBe(id);
      expect(wh.verify(request.body, request.headers)).toMatchObject({ id, type: "agreement.completed" });
    }

    const { body } = await gw.admin("GET", `/events/${id}`);
    expect(body.deliveries).toHaveLength(1);
    const [delivery] = body.deliveries;
    expect(delivery).toMatchObject({ destination: "a", state: "delivered", next_attempt_at: null, last_error: null });
    expect(delivery.attempts.map((a: { status: number }) => a.status)).toEqual([503, 503, 503, 200]);
    expect(delivery.attempts.map((a: { at: string }) => Date.parse(a.at) - t0)).toEqual([
      0,
      5 * SECOND,
      5 * SECOND + 5 * MINUTE,
      5 * SECOND + 35 * MINUTE,
    ]);
    expect(delivery.attempts[0]).toMatchObject({ ok: false, error: "HTTP 503" });
  });

  it("follows the default schedule for about a day, then dead-letters", async () => {
    const { gw, receiver } = await setup(() => ({ status: 500 }));
    const t0 = gw.time.clock.now();
    const id = await gw.post();
    await gw.time.advance(30 * HOUR);
    const offsets = receiver.requests.map((r) => r.n);
    expect(offsets).toHaveLength(8);
    const { body } = await gw.admin("GET", `/events/${id}`);
    const [delivery] = body.deliveries;
    expect(delivery.state).toBe("dead");
    expect(delivery.attempts.map((a: { at: string }) => (Date.parse(a.at) - t0) / SECOND)).toEqual([
      0, 5, 305, 2105, 9305, 27_305, 63_305, 99_305,
    ]);
    await gw.time.advance(48 * HOUR);
    expect(receiver.requests).toHaveLength(8);
    // /metrics wants a token or an allowed address
    // (docs/security-and-deployment.md#what-protects-what); in process there is no address.
    const metrics = await (
      await gw.gateway.fetch(
        new Request("http://gateway.test/metrics", { headers: { authorization: `Bearer ${gw.adminKey}` } }),
      )
    ).text();
    expect(metrics).toContain('gateway_deliveries_total{destination="a",outcome="dead"} 1');
    expect(metrics).toContain('gateway_delivery_attempts_total{destination="a",outcome="failure"} 8');
    expect(metrics).toContain('gateway_delivery_backlog{destination="a"} 0');
  });

  it("uses a destination's own schedule", async () => {
    const { gw, receiver } = await setup(() => ({ status: 500 }), { retry: { schedule: [1, 2], jitter: 0 } });
    const id = await gw.post();
    await gw.time.advance(2 * SECOND);
    expect(receiver.requests).toHaveLength(2);
    await gw.time.advance(1 * SECOND);
    expect(receiver.requests).toHaveLength(3);
    expect((await gw.admin("GET", `/events/${id}`)).body.deliveries[0].state).toBe("dead");
  });

  it("honours Retry-After (seconds and HTTP date) when longer than the schedule", async () => {
    const { gw, receiver } = await setup((r) =>
      r.n === 1
        ? { status: 429, headers: { "retry-after": "120" } }
        : r.n === 2
          ? { status: 503, headers: { "retry-after": new Date(Date.now() + 3 * HOUR).toUTCString() } }
          : { status: 200 },
    );
    await gw.post();
    await gw.time.advance(119 * SECOND);
    expect(receiver.requests).toHaveLength(1);
    await gw.time.advance(1 * SECOND);
    expect(receiver.requests).toHaveLength(2);
    // The date is relative to the real clock when the answer came; allow a little slack.
    await gw.time.advance(3 * HOUR - 10 * SECOND);
    expect(receiver.requests).toHaveLength(2);
    await gw.time.advance(20 * SECOND);
    expect(receiver.requests).toHaveLength(3);
  });
});

describe("circuit breaker", () => {
  it("opens after N consecutive failures, probes after the cooldown, closes on success", async () => {
    let healthy = false;
    const { gw, receiver } = await setup(() => ({ status: healthy ? 200 : 500 }), {
      concurrency: 1,
      breaker: { failures: 3, cooldownSeconds: 30 },
    });
    for (let i = 0; i < 5; i++) await gw.post();
    expect(receiver.requests).toHaveLength(3);
    let [health] = (await gw.admin("GET", "/destinations")).body.destinations;
    expect(health.breaker).toMatchObject({ state: "open", consecutive_failures: 3 });
    expect(health.backlog).toBe(5);

    // The first three are due again at +5 s, but the breaker holds them until +30 s.
    await gw.time.advance(29 * SECOND);
    expect(receiver.requests).toHaveLength(3);
    // The probe fails: open again for twice as long.
    await gw.time.advance(1 * SECOND);
    expect(receiver.requests).toHaveLength(4);
    await gw.time.advance(59 * SECOND);
    expect(receiver.requests).toHaveLength(4);
    healthy = true;
    await gw.time.advance(1 * SECOND);
    [health] = (await gw.admin("GET", "/destinations")).body.destinations;
    expect(health.breaker.state).toBe("closed");
    expect(health.backlog).toBe(0);
    expect(health.counts).toEqual({ delivered: 5 });
    expect(receiver.requests.filter((r) => r.n > 4)).toHaveLength(5);
  });
});

describe("410 Gone", () => {
  it("disables the destination: no more attempts until resumed, events kept", async () => {
    let gone = true;
    const { gw, receiver } = await setup(() => ({ status: gone ? 410 : 200 }));
    const first = await gw.post();
    const second = await gw.post();
    expect(receiver.requests).toHaveLength(1);
    const [health] = (await gw.admin("GET", "/destinations")).body.destinations;
    expect(health).toMatchObject({ state: "disabled", backlog: 1 });
    expect((await gw.admin("GET", `/events/${first}`)).body.deliveries[0]).toMatchObject({ state: "dead" });
    expect((await gw.admin("GET", `/events/${second}`)).body.deliveries[0]).toMatchObject({ state: "paused" });
    await gw.time.advance(24 * HOUR);
    expect(receiver.requests).toHaveLength(1);

    gone = false;
    expect((await gw.admin("POST", "/destinations/a/resume")).body.destination.state).toBe("active");
    await gw.engine.settled();
    expect(receiver.ids()).toEqual([first, second]);
    expect((await gw.admin("GET", `/events/${second}`)).body.deliveries[0].state).toBe("delivered");
  });
});
