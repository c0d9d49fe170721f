/**
 * Three gateway processes on one shared engine (Redis, PostgreSQL) behave as one gateway: one
 * 202 for a delivery posted to all three at once, a live subscriber on one instance sees what
 * the others accept, in order, and resumes on another instance without gap or repeat; and 300
 * concurrent proxied calls over three cold instances cause exactly one token request (the token
 * cache's kv lock works across processes; src/proxy/token-cache.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { adminGet, esignDelivery, listAllEventIds, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { fullClient, newKey, proxyConfig, proxyEnv } from "../proxy/proxy-fixtures.ts";
import { openReadyWs } from "../stream/stream-fixtures.ts";
import { type Cluster, ENGINES, type Engine, startCluster, startEngine, wsUrlOf } from "./cluster-fixtures.ts";

describe.each(ENGINES)("on %s", (engineName) => {
  let engine: Engine;
  let cluster: Cluster;

  beforeAll(async () => {
    engine = await startEngine(engineName);
    cluster = await startCluster({ ...engine.cluster, count: 3 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await engine?.stop();
  });

  test("the same delivery posted to all three instances at once: exactly one 202 and one event", async () => {
    const { gateways, secrets } = cluster;
    for (let round = 0; round < 5; round++) {
      const delivery = await esignDelivery(secrets.esign, "agreement.completed");
      const answers = await Promise.all(gateways.map((g) => postWebhook(g.url, "esign", delivery)));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 202)).toHaveLength(1);
      // The others either saw the recorded mark (200 duplicate) or the claim in progress (409).
      expect(statuses.every((s) => s === 202 || s === 200 || s === 409)).toBe(true);
      const accepted = answers[statuses.indexOf(202)] as Response;
      const id = ((await accepted.json()) as { id: string }).id;
      for (const g of gateways) {
        const ids = await listAllEventIds(g.url, secrets.adminKey);
        expect(ids.filter((x) => x === id)).toHaveLength(1);
      }
    }
  });

  test("a subscriber on instance 1 sees events accepted on 2 and 3 in order, then resumes on 3 by cursor", async () => {
    const [one, two, three] = cluster.gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
    const { secrets, streamKey } = cluster;
    const post = async (gateway: { url: string }, i: number) => {
      const delivery =
        i % 2 === 0
          ? await esignDelivery(secrets.esign)
          : await staffingDelivery(secrets.staffing, "candidate.accepted");
      const answer = await postWebhook(gateway.url, i % 2 === 0 ? "esign" : "staffing", delivery);
      expect(answer.status).toBe(202);
      return ((await answer.json()) as { id: string }).id;
    };
    const client = await openReadyWs(wsUrlOf(one, streamKey));
    const first: string[] = [];
    for (let i = 0; i < 20; i++) first.push(await post(i % 2 === 0 ? two : three, i));
    await client.log.waitForEvents(first.length);
    expect(client.log.eventIds()).toEqual(first);
    const cursors = client.log.frames.filter((f) => f.type === "event").map((f) => Number(f.cursor));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    const last = client.log.frames.filter((f) => f.type === "event").at(-1)?.cursor as string;
    client.ws.close();
    await client.closed;

    // While disconnected, every instance accepts more; the resume on instance 3 gets exactly those.
    const missed: string[] = [];
    for (let i = 0; i < 12; i++) missed.push(await post([one, two, three][i % 3] as GatewayProcess, i));
    const resumed = await openReadyWs(wsUrlOf(three, streamKey, last));
    const live: string[] = [];
    for (let i = 0; i < 6; i++) live.push(await post([one, two][i % 2] as GatewayProcess, i));
    await resumed.log.waitForEvents(missed.length + live.length);
    expect(resumed.log.eventIds()).toEqual([...missed, ...live]);
    resumed.ws.close();

    const health = await adminGet(one.url, "/healthz", secrets.adminKey);
    expect(health.status).toBe(200);
    expect((health.body as { store: { driver: string } }).store.driver).toBe(engineName);
  });

  test("300 concurrent proxy calls over three cold instances: exactly one token request", async () => {
    const esign: EsignServer = await startEsignEmulator({ generalLimitPerClient: 100_000 });
    let gateways: GatewayProcess[] = [];
    try {
      const key = newKey();
      const options = { esign, clients: [fullClient(key)], store: engine.store() };
      gateways = await Promise.all(
        [0, 1, 2].map(() => startGatewayProcess({ config: proxyConfig(options), env: proxyEnv(options) })),
      );
      const agreementId = await esign.createAgreement("Shared token");
      const before = esign.tokenRequests();
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          fetch(`${gateways[i % 3]?.url}/api/esign/agreements/${agreementId}`, {
            headers: { authorization: `Bearer ${key}` },
          }).then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          }),
        ),
      );
      expect(answers.filter((s) => s === 200)).toHaveLength(300);
      expect(esign.tokenRequests() - before).toBe(1);
      expect(new Set(esign.issued)).toHaveProperty("size", 1);
    } finally {
      await Promise.all(gateways.map((g) => g.kill()));
      await esign.close();
    }
  }, 120_000);
});
