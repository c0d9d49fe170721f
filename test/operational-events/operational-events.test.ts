/**
 * Operational events through a real gateway process, on the SQLite store and on a real
 * redis-server: a destination that fails (`gateway.destination.failing`, its dead letters as one
 * `gateway.deliveries.dead`) and comes back (`recovered`), a destination that answers 410
 * (`disabled`) and is resumed (`recovered`), a spike of forged webhooks
 * (`gateway.ingress.verification_failures`) that ends (`.recovered`), and, on SQLite, a disk that
 * refuses writes (`gateway.store.unwritable`, then `gateway.store.recovered`). Each fires exactly
 * once, reaches an http destination and a mail destination routed with `sources: ["gateway"]`,
 * and an event about a destination never goes to that destination.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { startRedisServer } from "../helpers/redis-server.ts";
import { adminKeyHash, esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";

const run = promisify(execFile);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

interface Setup {
  gateway: GatewayProcess;
  flaky: WebhookReceiver;
  gone: WebhookReceiver;
  alerts: WebhookReceiver;
  smtp: SmtpTestServer;
}

async function startSetup(store: "sqlite" | "redis"): Promise<Setup> {
  const flaky = await startWebhookReceiver(() => ({ status: 503 }));
  const gone = await startWebhookReceiver(() => ({ status: 410 }));
  const alerts = await startWebhookReceiver();
  const smtp = await startSmtpServer();
  cleanups.push(() => Promise.all([flaky.close(), gone.close(), alerts.close(), smtp.close()]));
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-opevents-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  let storeConfig: Record<string, unknown> = { driver: "sqlite", dir: dataDir };
  if (store === "redis") {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    storeConfig = { driver: "redis", url: redis.url, prefix: `o${randomBytes(4).toString("hex")}` };
  }
  const http = (id: string, receiver: WebhookReceiver) => ({
    id,
    type: "http",
    url: receiver.url,
    secrets: [WHSEC],
    allowCidrs: ["127.0.0.1/32"],
    retry: { schedule: [0.05, 0.05], jitter: 0 },
    breaker: { failures: 1000 },
  });
  const config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    store: storeConfig,
    destinations: [
      http("flaky", flaky),
      http("gone", gone),
      http("alerts", alerts),
      {
        id: "mail",
        type: "email",
        host: "127.0.0.1",
        allowPrivateNetworks: true,
        port: smtp.port,
        from: "gw@example.com",
        to: ["ops@example.com"],
      },
    ],
    routes: [
      { sources: ["esign"], destinations: ["flaky"] },
      { sources: ["staffing"], destinations: ["gone"] },
      { sources: ["gateway"], destinations: ["alerts", "mail", "flaky"] },
    ],
    operationalEvents: {
      failing: { minAttempts: 4, errorRate: 0.5, recoverAfterSuccesses: 2 },
      deadBatchSeconds: 1,
      verificationFailures: { threshold: 5, windowSeconds: 2 },
    },
    ingress: { failedVerificationLimit: { maxFailures: 0 } },
  };
  // `trap '' XFSZ`: a write past the file size limit fails with EFBIG instead of killing the process.
  const gateway = await startGatewayProcess({ secrets, dataDir, config, shellPrefix: "trap '' XFSZ" });
  cleanups.push(() => gateway.kill());
  return { gateway, flaky, gone, alerts, smtp };
}

interface Received {
  type: string;
  data: Record<string, unknown>;
}

const eventsAt = (receiver: WebhookReceiver): Received[] =>
  receiver.requests.filter((r) => r.body).map((r) => JSON.parse(r.body) as Received);

const gatewayEventsAt = (receiver: WebhookReceiver) => eventsAt(receiver).filter((e) => e.type.startsWith("gateway."));

/** Waits until the alerts destination got `type` (about `subject`, when given). */
async function untilAlert(setup: Setup, type: string, destination?: string) {
  await waitFor(`${type} ${destination ?? ""}`, () =>
    gatewayEventsAt(setup.alerts).some(
      (e) => e.type === type && (destination === undefined || e.data.destination === destination),
    ),
  );
}

async function sendEsign(setup: Setup, count: number) {
  for (let i = 0; i < count; i++) {
    const response = await postWebhook(setup.gateway.url, "esign", await esignDelivery(setup.gateway.secrets.esign));
    expect(response.status).toBe(202);
  }
}

describe.each(["sqlite", "redis"] as const)("operational events (%s store)", (store) => {
  test("each fires once on its condition and once on recovery, to an http and a mail destination", async () => {
    const setup = await startSetup(store);
    const { gateway } = setup;

    // flaky fails every attempt: 2 events x 3 attempts, both dead.
    await sendEsign(setup, 2);
    await untilAlert(setup, "gateway.destination.failing", "flaky");
    await untilAlert(setup, "gateway.deliveries.dead", "flaky");
    const failing = gatewayEventsAt(setup.alerts).find((e) => e.type === "gateway.destination.failing");
    expect(failing?.data).toMatchObject({ destination: "flaky", attempts: 4, failures: 4, error_rate: 1 });
    const dead = gatewayEventsAt(setup.alerts).find((e) => e.type === "gateway.deliveries.dead");
    expect(dead?.data).toMatchObject({ destination: "flaky", count: 2 });
    expect(dead?.data.events).toHaveLength(2);

    // gone answers 410: disabled.
    const staffing = await postWebhook(gateway.url, "staffing", await staffingDelivery(gateway.secrets.staffing));
    expect(staffing.status).toBe(202);
    await untilAlert(setup, "gateway.destination.disabled", "gone");

    // flaky is back: two successes and it has recovered.
    setup.flaky.respond(() => ({ status: 200 }));
    await sendEsign(setup, 2);
    await untilAlert(setup, "gateway.destination.recovered", "flaky");

    // gone is back and resumed by an operator: recovered, and its waiting delivery goes out.
    setup.gone.respond(() => ({ status: 200 }));
    const resumed = await fetch(`${gateway.url}/destinations/gone/resume`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(resumed.status).toBe(200);
    await untilAlert(setup, "gateway.destination.recovered", "gone");

    // A spike of forged webhooks, then quiet: the spike's window (2 s) passes.
    for (let i = 0; i < 5; i++) {
      const delivery = await esignDelivery("whsec_not_the_secret_at_all_00000000");
      expect((await postWebhook(gateway.url, "esign", delivery)).status).toBe(401);
    }
    await untilAlert(setup, "gateway.ingress.verification_failures");
    const conditions = await fetch(`${gateway.url}/conditions`, {
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(((await conditions.json()) as { conditions: { type: string }[] }).conditions.map((c) => c.type)).toContain(
      "gateway.ingress.verification_failures",
    );
    await untilAlert(setup, "gateway.ingress.verification_failures.recovered");

    const expected = [
      "gateway.destination.failing",
      "gateway.deliveries.dead",
      "gateway.destination.disabled",
      // The delivery answered 410 is a dead letter of its own.
      "gateway.deliveries.dead",
      "gateway.destination.recovered",
      "gateway.destination.recovered",
      "gateway.ingress.verification_failures",
      "gateway.ingress.verification_failures.recovered",
    ];
    const types = gatewayEventsAt(setup.alerts).map((e) => e.type);
    expect([...types].sort()).toEqual([...expected].sort());
    const deadBatches = gatewayEventsAt(setup.alerts).filter((e) => e.type === "gateway.deliveries.dead");
    expect(Object.fromEntries(deadBatches.map((e) => [e.data.destination, e.data.count]))).toEqual({
      flaky: 2,
      gone: 1,
    });
    const spike = gatewayEventsAt(setup.alerts).find((e) => e.type === "gateway.ingress.verification_failures");
    expect(spike?.data).toMatchObject({ source: "esign", failures: 5, reasons: { invalid_signature: 5 } });
    // The same events by mail.
    const mails = await setup.smtp.waitForMessages(expected.length);
    expect(mails.map((m) => m.parsed.subject?.split(":")[0]).sort()).toEqual([...expected].sort());
    // None about flaky went to flaky.
    for (const event of gatewayEventsAt(setup.flaky)) expect(event.data.destination).not.toBe("flaky");
    // Nothing active any more.
    const after = await fetch(`${gateway.url}/conditions`, {
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(await after.json()).toEqual({ conditions: [] });
  });
});

test("an unwritable store: gateway.store.unwritable and gateway.store.recovered once writes succeed again", async () => {
  const setup = await startSetup("sqlite");
  const { gateway } = setup;
  await sendEsign(setup, 0);
  // Disk full: every write of the process past the first byte of a file fails (EFBIG).
  await run("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=1:"]);
  const refused = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign));
  expect(refused.status).toBe(503);
  await run("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=unlimited:"]);
  setup.flaky.respond(() => ({ status: 200 }));
  await sendEsign(setup, 1);
  await untilAlert(setup, "gateway.store.recovered");
  const events = gatewayEventsAt(setup.alerts).filter((e) => e.type.startsWith("gateway.store."));
  expect(events.map((e) => e.type)).toEqual(["gateway.store.unwritable", "gateway.store.recovered"]);
  expect(events[0]?.data).toMatchObject({ writes: "journal" });
});
