/**
 * Issue 30, row 4, in workerd: a memory bomb, a quadratic built-in call (which QuickJS's
 * interrupt never reaches) and an endless loop run on three destinations, each in its transform
 * object (adapters/cloudflare/transform-object.ts), next to a fourth, plain destination. The
 * delivery object awaits each call with its deadline, so the plain destination delivers both
 * events, each bad transform ends as a dead letter with `transform_error` (permanent: one
 * attempt), the quadratic one never delivers, and the admin API and the webhook endpoint keep
 * answering. workerd runs every isolate of the suite on one thread, so here a call stuck in a
 * built-in pauses the whole local runtime for its duration (seconds); what this proves is that
 * the delivery object stops waiting at the deadline and carries on, which is what a deployed
 * Worker relies on (docs/transformations.md "Where transforms run").
 */

import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, BASE, esignBody, postEsign, type Received, received, waitFor } from "./gateway-client.ts";

async function record(type: string): Promise<string> {
  const { body } = esignBody("evt-nostall", type);
  const response = await postEsign(body);
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

interface DeliveryJson {
  event_id: string;
  state: string;
  attempts: { ok: boolean; code?: string; error: string | null; transform?: string }[];
}

async function deliveries(destination: string, state: string): Promise<DeliveryJson[]> {
  const response = await admin(`/destinations/${destination}/deliveries?state=${state}&limit=100`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { deliveries: DeliveryJson[] }).deliveries;
}

// Generous bounds: each quadratic call holds the local runtime for seconds (8 s on a quiet
// 2-core machine, minutes on a loaded one), and every poll waits through it.
const ATTEMPTS = 20_000;

const deadOf = (destination: string, id: string) =>
  waitFor(async () => (await deliveries(destination, "dead")).find((d) => d.event_id === id), ATTEMPTS);

const byEvent = (got: Received[], id: string) => got.filter((r) => r.headers["webhook-id"] === id);

describe("runaway transforms in workerd", () => {
  it("fail alone at their deadline while the plain destination delivers and the gateway answers", async () => {
    const first = await record("agreement.superseded");
    const second = await record("agreement.superseded");

    // The gateway keeps answering while the transforms run: the admin API (served by the
    // delivery object) and another webhook.
    expect((await admin("/destinations")).status).toBe(200);
    const other = await record("agreement.completed");

    for (const id of [first, second]) {
      const [delivered] = await waitFor(async () => {
        const got = byEvent(await received("/ns-plain"), id);
        return got.length > 0 ? got : undefined;
      }, ATTEMPTS);
      expect(JSON.parse(delivered?.body ?? "{}")).toMatchObject({ id, type: "agreement.superseded" });
      for (const [destination, error] of [
        // Filling a million-element array can outlast 50 ms on a loaded machine before the limit.
        ["ns-bomb", /^transform_error: the transform (used more than 16 MiB|ran longer than 50 ms)$/],
        ["ns-quadratic", /^transform_error: the transform ran longer than 50 ms$/],
        ["ns-loop", /^transform_error: the transform ran longer than 50 ms$/],
      ] as const) {
        const dead = await deadOf(destination, id);
        expect(dead.attempts, destination).toHaveLength(1);
        expect(dead.attempts[0], destination).toMatchObject({ ok: false, code: "transform_error" });
        expect(dead.attempts[0]?.error, destination).toMatch(error);
        expect(dead.attempts[0]?.transform, destination).toMatch(/^sha256:[0-9a-f]{16}$/);
      }
      // The admin API answers between the stalls too.
      expect((await deliveries("ns-plain", "delivered")).some((d) => d.event_id === id)).toBe(true);
    }
    // Nothing of the bad transforms reached their destinations; no delivery is left in flight.
    for (const path of ["/ns-bomb", "/ns-quadratic", "/ns-loop"]) {
      const got = await received(path);
      expect(byEvent(got, first).length + byEvent(got, second).length, path).toBe(0);
    }
    for (const destination of ["ns-bomb", "ns-quadratic", "ns-loop", "ns-plain"]) {
      for (const state of ["pending", "delivering"]) {
        const left = (await deliveries(destination, state)).filter((d) => [first, second].includes(d.event_id));
        expect(left, `${destination} ${state}`).toEqual([]);
      }
    }
    // Health answers 200 once the stalls are over (locally they held the whole runtime, and
    // a store probe that waited through one may have answered 503 meanwhile).
    await waitFor(async () => ((await exports.default.fetch(`${BASE}/healthz`)).status === 200 ? true : undefined));
    // The plain destination of agreement.* delivered the other webhook.
    await waitFor(async () => {
      const got = byEvent(await received("/hook"), other);
      return got.length > 0 ? got : undefined;
    }, ATTEMPTS);
  }, 900_000);
});
