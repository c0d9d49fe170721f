/**
 * Fan-out in a real gateway process: four signed `http` destinations, one of them dead. The
 * three live ones get every event exactly once, verifiable with the Standard Webhooks library,
 * while the dead one is retried and its breaker opens; nothing it does reaches the others. Both
 * ways a gateway sends HTTP deliveries: from its main thread and from the send thread.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { startGatewayProcess } from "../helpers/gateway-process.ts";
import { makeWhsecSecret } from "./helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir, postMany, readDestinations } from "./helpers/process-fixtures.ts";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "./helpers/webhook-receiver.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

// In the main thread (the default) and on the send thread (GATEWAY_HTTP_SEND_THREAD=on).
describe.each(["off", "on"])("fan-out to four destinations, one dead (send thread %s)", (sendThread) => {
  it("the other three get everything, once each, signed", async () => {
    const whsec = makeWhsecSecret();
    const live: WebhookReceiver[] = [];
    for (let i = 0; i < 3; i++) live.push(await startWebhookReceiver());
    const dead = await startWebhookReceiver(() => ({ status: 503 }));
    cleanup.push(...[...live, dead].map((r) => () => r.close()));
    const dataDir = await makeDataDir();
    const adminKey = `admin_${Date.now()}`;
    const gateway = await startGatewayProcess({
      dataDir,
      secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
      env: { TEST_WHSEC: whsec, GATEWAY_HTTP_SEND_THREAD: sendThread },
      config: fanoutConfig(dataDir, adminKey, [
        ...live.map((r, i) => ({ id: `live-${i}`, url: r.url })),
        // Fast retries so the dead destination is hammered (and trips its breaker) during the test.
        {
          id: "dead",
          url: dead.url,
          retry: { schedule: Array(20).fill(0.05) },
          breaker: { failures: 5, cooldownSeconds: 0.2 },
        },
      ]),
    });
    cleanup.push(() => gateway.kill());

    const ids = await postMany(gateway, 300);
    for (const receiver of live) {
      await waitFor("every event at every live destination", () => receiver.requests.length >= ids.length);
    }
    const wh = new Webhook(whsec);
    for (const receiver of live) {
      expect([...receiver.ids()].sort()).toEqual([...ids].sort());
      for (const request of receiver.requests) {
        const event = wh.verify(request.body, request.headers) as { id: string };
        expect(event.id).toBe(request.headers["webhook-id"]);
      }
    }
    await waitFor("the live destinations to drain", async () =>
      (await readDestinations(gateway)).filter((d) => d.id !== "dead").every((d) => d.backlog === 0),
    );
    const health = await readDestinations(gateway);
    for (const d of health.filter((h) => h.id !== "dead")) {
      expect(d).toMatchObject({ state: "active", backlog: 0, counts: { delivered: ids.length } });
    }
    const deadHealth = health.find((d) => d.id === "dead");
    expect(deadHealth?.last_error?.error).toBe("HTTP 503");
    expect(deadHealth?.backlog).toBeGreaterThan(0);
    expect(dead.requests.length).toBeGreaterThan(0);

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain(`gateway_deliveries_total{destination="live-0",outcome="delivered"} ${ids.length}`);
    expect(metrics).toMatch(/gateway_delivery_attempts_total\{destination="dead",outcome="failure"\} \d+/);
    expect(metrics).toMatch(/gateway_delivery_attempt_seconds_count\{destination="live-1"\} 300/);
  });
});
