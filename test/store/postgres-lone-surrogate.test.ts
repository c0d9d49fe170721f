/**
 * A signed webhook whose JSON holds a lone surrogate escape (`"\ud800"`: valid JSON, which
 * JSON.parse accepts, but which PostgreSQL's JSONB refuses), posted to a real gateway process on
 * the `postgres` store together with ordinary ones: every one is acknowledged and recorded (the
 * append's group commit used to fail as a whole, answering 503 to all of them), and a content
 * filter still finds it (checked in memory: it has no JSONB document).
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { type PostgresServer, startPostgresServer } from "../helpers/postgres-server.ts";
import { adminGet, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { type Cluster, startCluster } from "../scaleout/cluster-fixtures.ts";

let server: PostgresServer;
let cluster: Cluster;

beforeAll(async () => {
  server = await startPostgresServer();
  cluster = await startCluster({ postgresUrl: server.url, count: 1 });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await server?.stop();
});

test("a lone surrogate in a webhook's JSON: it and the webhooks committed with it are all acknowledged and recorded", async () => {
  const gateway = cluster.gateways[0] as GatewayProcess;
  const { secrets } = cluster;
  const hostile = await esignDelivery(secrets.esign, "agreement.completed", {
    edit: (body) => {
      body.note = "\ud800 lone high, \udc00 lone low";
    },
  });
  // The escape travels as the six characters `\ud800` (JSON.stringify escapes lone surrogates).
  expect(new TextDecoder().decode(hostile.body)).toContain("\\ud800");
  const ordinary = await Promise.all(Array.from({ length: 15 }, () => esignDelivery(secrets.esign)));
  // Posted together, so that they share group commits with the hostile one.
  const answers = await Promise.all([hostile, ...ordinary].map((d) => postWebhook(gateway.url, "esign", d)));
  const bodies = await Promise.all(
    answers.map(async (a) => ({ status: a.status, body: (await a.json()) as { id: string } })),
  );
  expect(bodies.map((b) => b.status)).toEqual(bodies.map(() => 202));

  const hostileId = bodies[0]?.body.id as string;
  const stored = await adminGet(gateway.url, `/events/${hostileId}`, secrets.adminKey);
  expect(stored.status).toBe(200);
  expect(stored.body.event.data.note).toBe("\ud800 lone high, \udc00 lone low");
  for (const { body } of bodies.slice(1)) {
    expect((await adminGet(gateway.url, `/events/${body.id}`, secrets.adminKey)).status).toBe(200);
  }
  // A content filter on the field finds exactly it.
  const filter = encodeURIComponent(JSON.stringify({ data: { note: { $exist: true } } }));
  const listed = await adminGet(gateway.url, `/events?filter=${filter}`, secrets.adminKey);
  expect(listed.status).toBe(200);
  expect((listed.body.events as { id: string }[]).map((e) => e.id)).toEqual([hostileId]);
  // The same delivery again is a duplicate of it.
  const again = await postWebhook(gateway.url, "esign", hostile);
  expect(again.status).toBe(200);
  expect(((await again.json()) as { id: string }).id).toBe(hostileId);
}, 120_000);
