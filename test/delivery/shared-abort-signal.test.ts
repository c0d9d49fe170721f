/**
 * Every attempt of one destination gets the lane's one shutdown signal
 * (src/delivery/destination-lane.ts), so a destination with `concurrency` above 10 has that many
 * abort listeners on one signal at once. The Node transports (adapters/sink/shared-abort-signal.ts)
 * must take that without Node's possible-leak warning, and must remove each listener when its
 * attempt ends. Checked on the real `http` sink with 16 attempts held in flight together.
 */
import { getEventListeners } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as v from "valibot";
import { afterAll, expect, test } from "vitest";
import { httpWebhookSink } from "../../adapters/sink/http.ts";
import { HttpDestinationSchema } from "../../src/delivery/http/http-destination-schema.ts";
import { makeTestRecord } from "../conformance/sink-conformance.ts";
import { makeWhsecSecret } from "./helpers/in-process-gateway.ts";

const IN_FLIGHT = 16;

/** Holds every answer until IN_FLIGHT requests are open at once, then answers them all. */
const held: ServerResponse[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    held.push(res);
    if (held.length === IN_FLIGHT) for (const waiting of held.splice(0)) waiting.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test("16 attempts in flight on one shutdown signal: all delivered, no leak warning, no listener left", async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  const destination = v.parse(HttpDestinationSchema, {
    id: "hook",
    type: "http",
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    secrets: [makeWhsecSecret()],
    allowCidrs: ["127.0.0.1/32"],
    concurrency: IN_FLIGHT,
  });
  const sink = httpWebhookSink(destination, undefined);
  const lane = new AbortController();
  try {
    const results = await Promise.all(
      Array.from({ length: IN_FLIGHT }, () => sink.deliver(makeTestRecord(), lane.signal)),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    // A warning is emitted on the next tick after the listener that crossed the limit.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    expect(getEventListeners(lane.signal, "abort")).toHaveLength(0);
  } finally {
    process.off("warning", onWarning);
    await sink.close();
  }
});
