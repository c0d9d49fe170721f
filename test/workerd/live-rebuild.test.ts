/**
 * A hibernatable socket outlives the live hub object's memory: a fresh instance of the object on
 * the same state (what the runtime makes when it wakes a hibernated object) rebuilds the
 * socket's session from its attachment when the next event is published, and that session
 * resumes from the socket's last cursor through the journal, so an event recorded meanwhile is
 * still delivered.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { LiveHubObject } from "../../adapters/cloudflare/live-hub-object.ts";
import { openWorkerStore } from "../../adapters/cloudflare/worker-env.ts";
import { makeRecord } from "../store/sample-records.ts";
import { openLiveSocket } from "./gateway-client.ts";

it("rebuilds a subscriber's session in a fresh object instance and resumes it from the cursor", async () => {
  const { socket, until } = await openLiveSocket();
  await until((t) => t.includes('"type":"ready"'));

  // Recorded straight into the journal: the running instance never hears of it.
  const record = { ...makeRecord(1), id: `evt_${crypto.randomUUID().replaceAll("-", "")}`, receivedAt: Date.now() };
  record.event = { ...record.event, id: record.id };
  const { seq } = await openWorkerStore(env).append(record, `rebuild\u0000${record.id}`, 60_000);
  expect(seq).toBeGreaterThan(0);
  const live = env.GATEWAY_LIVE.get(env.GATEWAY_LIVE.idFromName("live"));
  await runInDurableObject(live, async (_instance, state) => {
    const fresh = new LiveHubObject(state as never, env as never);
    await fresh.publish({ ...record, seq });
  });
  expect(await until((t) => t.includes(record.id))).toContain('"type":"event"');
  socket.close(1000, "done");
});
