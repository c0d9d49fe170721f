/**
 * Every attempt of one destination shares its lane's shutdown signal
 * (src/delivery/destination-lane.ts), so a destination with `concurrency` above 10 holds that
 * many abort listeners on one signal at once. In a real gateway process the Node adapter lifts
 * Node's listener-leak warning on these signals (adapters/node/lane-signal.ts): 16 attempts held
 * in flight together are all delivered, and no MaxListenersExceededWarning reaches the output.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, expect, test } from "vitest";
import { startGatewayProcess } from "../helpers/gateway-process.ts";
import { makeWhsecSecret } from "./helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir, postMany, readDestinations } from "./helpers/process-fixtures.ts";
import { waitFor } from "./helpers/webhook-receiver.ts";

const IN_FLIGHT = 16;

/** Holds answers until IN_FLIGHT requests are open at once, then answers them all (and later ones at once). */
const held: ServerResponse[] = [];
let heldTogether = 0;
let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    if (heldTogether >= IN_FLIGHT) return void res.writeHead(204).end();
    held.push(res);
    if (held.length === IN_FLIGHT) {
      heldTogether = held.length;
      for (const waiting of held.splice(0)) waiting.writeHead(204).end();
    }
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  for (const res of held) res.destroy();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

test("16 attempts in flight on one lane signal: all delivered, no listener-leak warning", async () => {
  const dataDir = await makeDataDir();
  const adminKey = `admin_${Date.now()}`;
  const gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    env: { TEST_WHSEC: makeWhsecSecret() },
    config: fanoutConfig(dataDir, adminKey, [
      { id: "wide", url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, concurrency: IN_FLIGHT },
    ]),
  });
  cleanup.push(() => gateway.kill());

  const ids = await postMany(gateway, 2 * IN_FLIGHT);
  await waitFor("every event delivered", async () => {
    const [wide] = await readDestinations(gateway);
    return wide?.counts.delivered === ids.length;
  });
  expect(heldTogether).toBe(IN_FLIGHT);
  expect(received).toBe(ids.length);
  expect(gateway.lines.filter((line) => line.includes("MaxListenersExceededWarning"))).toEqual([]);
});
