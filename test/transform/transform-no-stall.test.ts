/**
 * Issue 30, rows 1–3, in a real gateway process with the default transform settings (a worker
 * pool of `defaultPoolSize()` threads, 100 ms deadline slack): a memory bomb, a quadratic
 * built-in call (which never checks QuickJS's interrupt) and an endless loop run on three
 * destinations while a fourth delivers both events, another webhook is acknowledged and
 * `/healthz` keeps answering; each bad transform ends as `transform_error` and the quadratic one
 * does not deliver. Two destinations with the same module: a promise job queued by a synchronous
 * call for event A never runs in the later asynchronous call for event B, so nothing of A reaches
 * B's record. `POST /transforms/test` goes through the same pool. Latencies are printed, not
 * asserted (the bench measures them: `npm run bench -- transform`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import { type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { receivedBy, startReceivers, transformClient, transformDestinations } from "./transform-gateway.ts";

/** Row 1: allocates until something stops it (default limits: 50 ms, 16 MiB). */
const MEMORY_BOMB_PUSH = `export default () => { const a = []; for (;;) a.push(new Array(1e6).fill(7)); };`;
/** Row 2: one built-in call that runs for seconds and never checks the interrupt. */
const QUADRATIC = `export default () => ({ i: 'a'.repeat(140000).indexOf('a'.repeat(70000) + 'b') });`;
const ENDLESS = `export default () => { for (;;) {} };`;
const TRIVIAL = `export default (event) => ({ kind: event.type, agreement: event.data.agreement_id });`;
/**
 * Row 3: queues a job that logs the event's agreement id; `agreement.expired` answers with a
 * rejected promise (an asynchronous call, which runs the pending jobs), other types synchronously.
 */
const QUEUES_A_JOB = `
export default (event) => {
  Promise.resolve().then(() => console.log("job of " + event.data.agreement_id));
  if (event.type === "agreement.expired") return Promise.reject(new Error("refused " + event.data.agreement_id));
  return { kind: event.type };
};`;

const BAD = ["bomb", "quadratic", "loop"] as const;
const DESTINATIONS = [...BAD, "good", "plain", "jobs-a", "jobs-b"];
const TRANSFORMS: Record<string, unknown> = {
  bomb: { code: MEMORY_BOMB_PUSH },
  quadratic: { code: QUADRATIC },
  loop: { code: ENDLESS },
  good: { code: TRIVIAL },
  "jobs-a": { code: QUEUES_A_JOB },
  "jobs-b": { code: QUEUES_A_JOB },
};

const adminKey = `admin_nostall_${Date.now()}`;
let gateway: GatewayProcess;
let receivers: Map<string, WebhookReceiver>;
const cleanup: (() => Promise<unknown>)[] = [];
const { post, settled } = transformClient(() => gateway, adminKey);

beforeAll(async () => {
  const whsec = makeWhsecSecret();
  receivers = await startReceivers(DESTINATIONS, cleanup);
  const dataDir = await makeDataDir();
  const config = fanoutConfig(
    dataDir,
    adminKey,
    transformDestinations(receivers, TRANSFORMS, { schedule: [0.05], jitter: 0 }),
  );
  Object.assign(config, {
    routes: [
      { types: ["agreement.sent", "agreement.completed"], destinations: [...BAD, "good"] },
      { types: ["agreement.declined"], destinations: ["plain"] },
      { types: ["agreement.signed"], destinations: ["jobs-a"] },
      { types: ["agreement.expired"], destinations: ["jobs-b"] },
    ],
  });
  gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    env: { TEST_WHSEC: whsec },
    config,
  });
  cleanup.push(() => gateway.kill());
}, 120_000);

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

const received = (id: string, eventId: string) => receivedBy(receivers, id, eventId);

describe("runaway transforms do not stall the gateway (Node worker pool)", () => {
  it("a memory bomb, a quadratic built-in and an endless loop fail alone while the gateway carries on", async () => {
    const first = await post("agreement.sent", "agr-one");
    const second = await post("agreement.completed", "agr-two");

    // While the bad transforms run (and their workers are ended and replaced), the gateway answers.
    const health: number[] = [];
    let stop = false;
    const probing = (async () => {
      while (!stop) {
        const started = performance.now();
        const response = await fetch(`${gateway.url}/healthz`);
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        health.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const other = await post("agreement.declined", "agr-other");

    const finals = { bomb: "dead", quadratic: "dead", loop: "dead", good: "delivered" };
    const [one, two] = await Promise.all([settled(first.id, finals), settled(second.id, finals)]);
    await waitFor("the other webhook's delivery", () => received("plain", other.id).length === 1, 120_000);
    stop = true;
    await probing;

    // The fourth destination delivered both events, transformed.
    for (const [event, subject] of [
      [first.id, "agr-one"],
      [second.id, "agr-two"],
    ] as const) {
      const [request] = received("good", event);
      expect(JSON.parse(request?.body ?? "{}")).toMatchObject({ agreement: subject });
    }
    // Each bad transform: one attempt, transform_error, nothing delivered (the quadratic call
    // would succeed after seconds if it were let run).
    for (const deliveries of [one, two]) {
      for (const id of BAD) {
        const attempts = deliveries.get(id)?.attempts ?? [];
        expect(attempts, id).toHaveLength(1);
        expect(attempts[0], id).toMatchObject({ ok: false, code: "transform_error" });
      }
      expect(deliveries.get("quadratic")?.attempts[0]?.error).toBe(
        "transform_error: the transform ran longer than 50 ms",
      );
      expect(deliveries.get("loop")?.attempts[0]?.error).toBe("transform_error: the transform ran longer than 50 ms");
      expect(deliveries.get("bomb")?.attempts[0]?.error).toMatch(/^transform_error: .*(more than 16 MiB|ran longer)/);
    }
    for (const id of BAD) expect(received(id, first.id).length + received(id, second.id).length, id).toBe(0);
    expect(health.length).toBeGreaterThan(0);
    const worst = Math.round(Math.max(...health));
    console.log(
      `no-stall: other webhook acknowledged in ${Math.round(other.ms)} ms; /healthz ${health.length} probes, worst ${worst} ms`,
    );
  }, 300_000);

  it("a promise job queued by one call never runs in a later call of the same module (row 3)", async () => {
    // A: a synchronous call that leaves a job queued (its answer does not wait for it).
    const a = await post("agreement.signed", "agr-secret-of-a");
    await settled(a.id, { "jobs-a": "delivered" });
    // B: an asynchronous, rejecting call of the same module on the other destination.
    const b = await post("agreement.expired", "agr-of-b");
    const deliveries = await settled(b.id, { "jobs-b": "dead" });
    const attempt = deliveries.get("jobs-b")?.attempts[0];
    expect(attempt).toMatchObject({
      ok: false,
      code: "transform_error",
      error: "transform_error: Error: refused agr-of-b",
    });
    expect(attempt?.logs).toEqual(["job of agr-of-b"]);
    // Nothing of A anywhere in B's record: the event view (attempts, logs) and the dead letters.
    const view = await (
      await fetch(`${gateway.url}/events/${b.id}`, { headers: { authorization: `Bearer ${adminKey}` } })
    ).text();
    expect(view).not.toContain("agr-secret-of-a");
    const dead = await (
      await fetch(`${gateway.url}/destinations/jobs-b/deliveries?state=dead`, {
        headers: { authorization: `Bearer ${adminKey}` },
      })
    ).text();
    expect(dead).toContain(b.id);
    expect(dead).not.toContain("agr-secret-of-a");
  }, 300_000);

  it("POST /transforms/test runs in the pool: the quadratic call ends as transform_error, /healthz answers", async () => {
    const { id } = await post("agreement.declined", "agr-test");
    const testing = fetch(`${gateway.url}/transforms/test`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ event: id, code: QUADRATIC, timeoutMs: 100 }),
    });
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    const answer = (await (await testing).json()) as { ok: boolean; error?: { code: string; message: string } };
    expect(answer).toMatchObject({
      ok: false,
      error: { code: "transform_error", message: "the transform ran longer than 100 ms" },
    });
  }, 120_000);
});
