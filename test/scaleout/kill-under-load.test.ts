/**
 * Three instances on one shared engine (Redis, PostgreSQL) under round-robin load from 48
 * senders; one is killed with SIGKILL mid-load and the senders re-send what they did not see
 * acknowledged (as an upstream does). Every acknowledged event is in the log exactly once, none
 * is missing, and the HTTP destination receives every event, also those whose delivery the dead
 * instance had leased, with repeats only for the attempts that instance had in flight.
 *
 * Each instance posts to its own path of the receiver (`/hook/i<n>`), so every attempt the
 * receiver sees is attributed to the instance that made it. The contract checked: every copy
 * the receiver got is the final success, a failed attempt the outbox recorded (a timeout), or
 * an attempt the dead instance had in flight; so no live instance took over a lease whose holder
 * was alive and no instance repeated a finished delivery.
 */
import { describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  listAllEventIds,
  postWebhook,
  type SignedDelivery,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { ENGINES, useClusterSuite } from "./cluster-fixtures.ts";

const SENDERS = 48;
/**
 * Events per run: 480 in `npm test` (the file's two engines take ~160 s of the suite's budget).
 * `GATEWAY_TEST_KILL_EVENTS` (up to 5,000: the test's 300 s) runs a larger one: the repeats the
 * kill causes are a fixed number (the attempts in flight, a few times CONCURRENCY), so only a run
 * of >= 100 times that can show the target "repeats only for attempts in flight (<= 1 %)"; from
 * 2,000 events on the test asserts it (docs/several-instances.md gives the measured figures).
 */
const EVENTS = Number(process.env.GATEWAY_TEST_KILL_EVENTS ?? 480);
if (!Number.isInteger(EVENTS) || EVENTS < 480 || EVENTS > 5_000) {
  throw new Error("GATEWAY_TEST_KILL_EVENTS: an integer from 480 to 5000");
}
const KILL_AFTER = Math.floor(EVENTS / 3);
const CONCURRENCY = 8;
const VICTIM = 1;
/** From this many events on, the kill's repeats must stay within 1 % of them. */
const ONE_PERCENT_FROM = 2_000;

/** Sends one delivery until some live instance answers 2xx; returns the event id. */
async function sendUntilAcknowledged(
  gateways: GatewayProcess[],
  first: number,
  source: string,
  delivery: SignedDelivery,
) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const gateway = gateways[(first + attempt) % gateways.length] as GatewayProcess;
    try {
      const answer = await postWebhook(gateway.url, source, delivery);
      if (answer.status === 202 || answer.status === 200) return ((await answer.json()) as { id: string }).id;
      await answer.body?.cancel();
      // 409 (a claim in progress, e.g. by the dead instance, until it expires) or 503: back off
      // as an upstream would, then re-send.
      await new Promise((r) => setTimeout(r, 100));
    } catch {
      // Connection refused or reset: the instance is gone; the next attempt goes elsewhere.
    }
  }
  throw new Error("a delivery was never acknowledged");
}

describe.each(ENGINES)("on %s", (engineName) => {
  const suite = useClusterSuite(engineName, {
    // A slightly slow consumer keeps attempts in flight and deliveries queued behind them.
    responder: () => ({ status: 204, after: new Promise((r) => setTimeout(r, 20)) }),
    cluster: (receiver) => ({
      count: 3,
      hookUrl: receiver.url,
      // Long enough that a live instance on a saturated 2-core machine (load 20 measured) renews
      // in time (every third of it): only the dead instance's leases end.
      leaseSeconds: 10,
      editInstance: (config, index) => {
        const hook = config.destinations.find((d) => d.id === "hook") as Record<string, unknown>;
        hook.url = `${receiver.url}/i${index}`;
      },
    }),
  });

  test("SIGKILL of one instance mid-load: every acknowledged event once in the log and delivered", async () => {
    const { cluster, receiver } = suite;
    const { gateways, secrets } = cluster;
    const victim = gateways[VICTIM] as GatewayProcess;
    const acknowledged = new Set<string>();
    let next = 0;
    let killed: Promise<unknown> | undefined;
    const sender = async () => {
      for (let i = next++; i < EVENTS; i = next++) {
        const esign = i % 2 === 0;
        const delivery = esign
          ? await esignDelivery(secrets.esign, "agreement.completed")
          : await staffingDelivery(secrets.staffing, "candidate.accepted");
        const id = await sendUntilAcknowledged(gateways, i % 3, esign ? "esign" : "staffing", delivery);
        acknowledged.add(id);
        if (acknowledged.size >= KILL_AFTER && !killed) {
          killed = victim.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    await killed;
    expect(victim.child.signalCode).toBe("SIGKILL");
    expect(acknowledged.size).toBe(EVENTS);

    const survivor = gateways[0] as GatewayProcess;
    const logged = await listAllEventIds(survivor.url, secrets.adminKey);
    expect(logged).toHaveLength(new Set(logged).size);
    for (const id of acknowledged) expect(logged).toContain(id);
    // Anything else in the log is the gateway's own operational events (a destination reported
    // failing while the machine was saturated), never an upstream event nobody acknowledged.
    for (const id of logged.filter((x) => !acknowledged.has(x))) {
      const answer = await fetch(`${survivor.url}/events/${id}`, {
        headers: { authorization: `Bearer ${secrets.adminKey}` },
      });
      expect(((await answer.json()) as { event: { source: string } }).event.source).toBe("/gateway");
    }

    // The survivors take over the dead instance's leases once they end (10 s).
    const deliveredWithinMs = Math.max(60_000, EVENTS * 30);
    await waitFor(
      "every acknowledged event delivered",
      () => new Set(receiver.ids()).size >= EVENTS,
      deliveredWithinMs,
    );
    const received = () => receiver.requests.filter((r) => acknowledged.has(r.headers["webhook-id"] as string));
    let hooked = received();
    expect(new Set(hooked.map((r) => r.headers["webhook-id"]))).toEqual(acknowledged);

    // Who delivered what: copies per event per instance.
    const copies = new Map<string, { byVictim: number; bySurvivors: number }>();
    for (const request of hooked) {
      const id = request.headers["webhook-id"] as string;
      const entry = copies.get(id) ?? { byVictim: 0, bySurvivors: 0 };
      if (request.path === `/hook/i${VICTIM}`) entry.byVictim++;
      else entry.bySurvivors++;
      copies.set(id, entry);
    }
    const repeated = [...copies.entries()].filter(([, c]) => c.byVictim + c.bySurvivors > 1);

    // A copy is explained by the final success, a failed attempt the outbox recorded (the
    // receiver, starved of CPU, can answer after the sink's timeout: a retry, at least once), or
    // the dead instance's attempt in flight. Anything else would be a live instance taking over
    // a lease whose holder was alive, or an instance repeating a finished delivery.
    const unexplained: unknown[] = [];
    let takenOver = 0;
    // Copies beyond the first that no recorded failure explains: the kill's.
    let notRetries = 0;
    type Delivery = { destination: string; state: string; failures: number };
    const hookOf = async (id: string) => {
      const answer = await fetch(`${survivor.url}/events/${id}`, {
        headers: { authorization: `Bearer ${secrets.adminKey}` },
      });
      return ((await answer.json()) as { deliveries: Delivery[] }).deliveries.find((d) => d.destination === "hook");
    };
    for (const [id, c] of repeated) {
      // A retry may still be under way: its outcome first.
      await waitFor(`the delivery of ${id} finished`, async () => (await hookOf(id))?.state === "delivered", 60_000);
      const hook = await hookOf(id);
      hooked = received();
      const sent = hooked.filter((r) => r.headers["webhook-id"] === id);
      c.byVictim = sent.filter((r) => r.path === `/hook/i${VICTIM}`).length;
      c.bySurvivors = sent.length - c.byVictim;
      const allowed = 1 + (hook?.failures ?? 0) + Math.min(c.byVictim, 1);
      if (c.byVictim > 0) takenOver++;
      notRetries += Math.max(0, c.byVictim + c.bySurvivors - 1 - (hook?.failures ?? 0));
      if (hook?.state !== "delivered" || c.byVictim + c.bySurvivors > allowed) unexplained.push({ id, ...c, hook });
    }
    const repeats = hooked.length - copies.size;
    console.log(
      `${engineName} kill under load: ${repeats} repeated deliveries of ${EVENTS} (${((100 * repeats) / EVENTS).toFixed(1)} %), ${takenOver} of them attempts of the killed instance; ${notRetries} (${((100 * notRetries) / EVENTS).toFixed(1)} %) not retries after a recorded failure`,
    );
    // The same contract on both engines: no live instance took over a lease whose holder was
    // alive (a PostgreSQL renewal waits for a row its holder's own write holds), and no
    // finished delivery was repeated.
    expect(unexplained).toEqual([]);
    // Attempts in flight at the kill: the dead instance's slots, plus attempts that had
    // finished but whose outcome was not yet written when the process died. A lane frees its
    // slot once the outcome is queued; on PostgreSQL the outcome then waits for a group commit
    // (a transaction of several round trips, seconds at load 30), so more such outcomes can be
    // pending at the kill than on Redis (one script call). Measured on PostgreSQL at load 15-35:
    // 8 to 16 over 6 runs (8 to 28 at load 20-36 before a transaction's saves went into one
    // statement).
    expect(takenOver).toBeLessThanOrEqual((engineName === "redis" ? 2 : 4) * CONCURRENCY);
    if (EVENTS >= ONE_PERCENT_FROM) expect(takenOver).toBeLessThanOrEqual(EVENTS / 100);
  }, 300_000);
});
