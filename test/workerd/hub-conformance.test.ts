/**
 * The hub conformance suite (test/conformance/hub-conformance.ts) inside workerd against the
 * Worker's hub (adapters/cloudflare/durable-object-hub.ts), forwarding to the real live hub
 * object; and the forward itself: a record published on the hub reaches a WebSocket subscriber
 * attached to that object.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { durableObjectHub } from "../../adapters/cloudflare/durable-object-hub.ts";
import { openWorkerStore } from "../../adapters/cloudflare/worker-env.ts";
import { testHubDriver } from "../conformance/hub-conformance.ts";
import { makeTestRecord } from "../conformance/sink-conformance.ts";
import { openLiveSocket } from "./gateway-client.ts";

const live = () => env.GATEWAY_LIVE.get(env.GATEWAY_LIVE.idFromName("live"));
let pending: Promise<unknown>[] = [];
const openHub = () =>
  durableObjectHub({ forwards: [(record) => live().publish(record)], waitUntil: (p) => pending.push(p) });

testHubDriver("durable-object (Worker isolate)", {
  open: openHub,
  async flush() {
    const settling = pending;
    pending = [];
    await Promise.all(settling);
  },
});

it("forwards each published record to the live hub object's subscribers", async () => {
  const { socket, until } = await openLiveSocket();
  await until((t) => t.includes('"type":"ready"'));
  const hub = openHub();
  // A real journal record (a subscriber skips positions it has passed).
  const record = makeTestRecord();
  const { seq } = await openWorkerStore(env).append(record, `hub\u0000${record.id}`, 60_000);
  hub.publish({ ...record, seq });
  await Promise.all(pending);
  expect(await until((t) => t.includes(record.id))).toContain('"type":"event"');
  socket.close(1000, "done");
  await hub.close();
});
