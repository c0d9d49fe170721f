/**
 * The delivery admin API works from any instance of a shared outbox: a pause made through one
 * instance holds the deliveries every instance takes, a resume through another releases them,
 * and a replay asked of an instance that never delivered the event delivers it again.
 */
import { describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { ENGINES, useClusterSuite } from "./cluster-fixtures.ts";

describe.each(ENGINES)("on %s", (engineName) => {
  const suite = useClusterSuite(engineName, { cluster: (receiver) => ({ count: 2, hookUrl: receiver.url }) });

  const admin = (gateway: GatewayProcess, path: string, method = "GET") =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${suite.cluster.secrets.adminKey}`, "content-type": "application/json" },
      body: method === "POST" ? "{}" : undefined,
    });

  const hookStateOf = async (gateway: GatewayProcess, id: string) => {
    const body = (await (await admin(gateway, `/events/${id}`)).json()) as {
      deliveries?: { destination: string; state: string }[];
    };
    return body.deliveries?.find((d) => d.destination === "hook")?.state;
  };

  test("pause on one instance, accept on another, resume on the other, replay anywhere", async () => {
    const { cluster, receiver } = suite;
    const [one, two] = cluster.gateways as [GatewayProcess, GatewayProcess];
    expect((await admin(one, "/destinations/hook/pause", "POST")).status).toBe(200);

    const posted: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await postWebhook(two.url, "esign", await esignDelivery(cluster.secrets.esign));
      expect(answer.status).toBe(202);
      posted.push(((await answer.json()) as { id: string }).id);
    }
    // Whichever instance took each delivery holds it paused.
    for (const id of posted) await waitFor(`${id} paused`, async () => (await hookStateOf(one, id)) === "paused");
    expect(receiver.ids().filter((id) => posted.includes(id))).toEqual([]);

    expect((await admin(two, "/destinations/hook/resume", "POST")).status).toBe(200);
    await waitFor("every paused delivery sent after the resume", () =>
      posted.every((id) => receiver.ids().includes(id)),
    );
    for (const id of posted) await waitFor(`${id} delivered`, async () => (await hookStateOf(two, id)) === "delivered");

    const [replayed] = posted;
    expect((await admin(one, `/events/${replayed}/replay`, "POST")).status).toBe(202);
    await waitFor("the replay delivered", () => receiver.ids().filter((id) => id === replayed).length === 2);
  });
});
