/**
 * Issue 30, row 4, in workerd: a memory bomb, a quadratic built-in call (which QuickJS's
 * interrupt never reaches) and an endless loop run on three destinations, in the transform
 * objects (adapters/cloudflare/transform-object.ts), while a fourth destination with a trivial
 * transform delivers both events, another webhook is acknowledged and `/healthz` answers. Each
 * bad transform ends as a dead letter with `transform_error`; the quadratic one never delivers.
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
  attempts: { ok: boolean; code?: string; error: string | null }[];
}

const deliveryOf = (destination: string, id: string, state: string) =>
  waitFor(async () => {
    const page = (await (await admin(`/destinations/${destination}/deliveries?state=${state}&limit=100`)).json()) as {
      deliveries: DeliveryJson[];
    };
    return page.deliveries.find((d) => d.event_id === id);
  }, 4000);

const byEvent = (got: Received[], id: string) => got.filter((r) => r.headers["webhook-id"] === id);

describe("runaway transforms in workerd", () => {
  it("fail alone in their own objects while the other destination delivers", async () => {
    const first = await record("agreement.superseded");
    const second = await record("agreement.superseded");
    // The gateway keeps answering meanwhile.
    const other = await record("agreement.completed");
    const health = await exports.default.fetch(`${BASE}/healthz`);
    expect(health.status).toBe(200);

    for (const id of [first, second]) {
      const [delivered] = await waitFor(async () => {
        const got = byEvent(await received("/ns-good"), id);
        return got.length > 0 ? got : undefined;
      }, 4000);
      expect(JSON.parse(delivered?.body ?? "{}")).toEqual({ kind: "agreement.superseded", id });
      for (const destination of ["ns-bomb", "ns-quadratic", "ns-loop"]) {
        const dead = await deliveryOf(destination, id, "dead");
        expect(dead?.attempts, destination).toHaveLength(1);
        expect(dead?.attempts[0], destination).toMatchObject({ ok: false, code: "transform_error" });
      }
      const quadratic = await deliveryOf("ns-quadratic", id, "dead");
      expect(quadratic?.attempts[0]?.error).toBe("transform_error: the transform ran longer than 50 ms");
    }
    for (const path of ["/ns-bomb", "/ns-quadratic", "/ns-loop"]) {
      const got = await received(path);
      expect(byEvent(got, first).length + byEvent(got, second).length, path).toBe(0);
    }
    // The plain destination of agreement.* delivered the other webhook.
    await waitFor(async () => {
      const got = byEvent(await received("/hook"), other);
      return got.length > 0 ? got : undefined;
    }, 4000);
  }, 300_000);
});
