/**
 * Two instances on one PostgreSQL; one is frozen (SIGSTOP: a VM pause, a debugger, a stop-the-world
 * pause) in the middle of a load of webhooks, five times over. The other must go on acknowledging
 * its own webhooks while the first is frozen: the journal counter's row lock, which orders every
 * instance's appends, is held by an append transaction between round trips, and PostgreSQL ends
 * a transaction left idle that long (`APPEND_IDLE_LIMIT`, adapters/store/postgres/postgres-store.ts).
 * Without that limit the other instance answered 503 after its 30 s statement timeout. Afterwards
 * every acknowledged event, from either instance, is in the log once.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { type PostgresServer, startPostgresServer } from "../helpers/postgres-server.ts";
import { esignDelivery, listAllEventIds, postWebhook } from "../helpers/signed-requests.ts";
import { type Cluster, startCluster } from "./cluster-fixtures.ts";

const ROUNDS = 5;
const SENDERS = 24;

let server: PostgresServer;
let cluster: Cluster;

beforeAll(async () => {
  server = await startPostgresServer();
  cluster = await startCluster({ postgresUrl: server.url, count: 2 });
}, 120_000);
afterAll(async () => {
  for (const gateway of cluster?.gateways ?? []) gateway.child.kill("SIGCONT");
  await cluster?.stop();
  await server?.stop();
});

/** Posts a fresh e-sign delivery; the event id when it was acknowledged (202). */
async function send(gateway: GatewayProcess): Promise<string | undefined> {
  const answer = await postWebhook(gateway.url, "esign", await esignDelivery(cluster.secrets.esign));
  if (answer.status !== 202) {
    await answer.body?.cancel();
    return undefined;
  }
  return ((await answer.json()) as { id: string }).id;
}

describe("PostgreSQL: an instance frozen under load", () => {
  test("the other instance acknowledges its webhooks while the first is frozen, and no acknowledged event is lost", async () => {
    const [frozen, other] = cluster.gateways as [GatewayProcess, GatewayProcess];
    const acknowledged: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let sending = true;
      let accepted = 0;
      let loaded = () => {};
      const underLoad = new Promise<void>((resolve) => (loaded = resolve));
      const senders = Array.from({ length: SENDERS }, async () => {
        for (let n = 0; sending && n < 10_000; n++) {
          const id = await send(frozen).catch(() => undefined);
          if (!id) continue;
          acknowledged.push(id);
          if (++accepted === 40) loaded();
        }
      });
      // Frozen while its appends and claims are in flight.
      await underLoad;
      frozen.child.kill("SIGSTOP");
      try {
        for (let i = 0; i < 10; i++) {
          const id = await send(other);
          expect(id, `round ${round}, webhook ${i} to the other instance`).toBeDefined();
          acknowledged.push(id as string);
        }
      } finally {
        sending = false;
        frozen.child.kill("SIGCONT");
      }
      await Promise.all(senders);
    }
    // Every acknowledged event is in the log, once. (A webhook the frozen instance answered with
    // an error after it woke may be there too: its sender retries and gets the duplicate's 200.)
    const loggedIds = await listAllEventIds(other.url, cluster.secrets.adminKey);
    const logged = new Set(loggedIds);
    expect(acknowledged.filter((id) => !logged.has(id))).toEqual([]);
    expect(logged.size).toBe(loggedIds.length);
  }, 240_000);
});
