/**
 * Graceful shutdown of a real process: a delivery whose body is still arriving when SIGTERM
 * comes completes with 202, new connections are refused meanwhile, the process exits 0, and a
 * restart on the same data dir finds the event in the log.
 */
import { afterAll, expect, it } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { adminGet, esignDelivery } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";
import { openStreamedRequest } from "../ingress/streamed-request.ts";

const started: GatewayProcess[] = [];
afterAll(async () => {
  for (const gw of started) await gw.kill();
});

/** Resolves once `gw` printed a line containing `text` (bounded). */
async function waitForLine(gw: GatewayProcess, text: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!gw.lines.some((line) => line.includes(text))) {
    if (Date.now() > deadline) throw new Error(`no "${text}" line within ${timeoutMs} ms:\n${gw.lines.join("\n")}`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      gw.child.stdout!.once("data", () => {
        clearTimeout(timer);
        setImmediate(resolve);
      });
    });
  }
}

it("finishes the in-flight delivery, refuses new connections, exits 0 and keeps the event", async () => {
  const gw = await startEditedGatewayProcess((config) => {
    config.log = { level: "info" };
  });
  started.push(gw);
  const exited = new Promise<number | null>((resolve) => gw.child.once("exit", (code) => resolve(code)));
  const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed");
  const half = Math.floor(delivery.body.length / 2);

  const request = openStreamedRequest(`${gw.url}/webhooks/esign`, {
    ...delivery.headers,
    "content-length": String(delivery.body.length),
    expect: "100-continue",
  });
  // 100 Continue: the server parsed the head and runs the handler, so the request is in flight.
  await request.continued;
  await request.write(delivery.body.subarray(0, half));

  gw.child.kill("SIGTERM");
  await waitForLine(gw, '"msg":"shutting down"');
  await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();

  await request.write(delivery.body.subarray(half));
  const answer = await request.answer;
  expect(answer.status).toBe(202);
  const { id, duplicate } = JSON.parse(answer.text);
  expect(duplicate).toBe(false);
  // The client hangs up once answered (the answer still offers keep-alive during shutdown, so a
  // client that stays connected holds the exit back until the keep-alive timeout).
  request.destroy();
  expect(await exited).toBe(0);

  const restarted = await startEditedGatewayProcess(() => {}, { dataDir: gw.dataDir, secrets: gw.secrets });
  started.push(restarted);
  const detail = await adminGet(restarted.url, `/events/${id}`, gw.secrets.adminKey);
  expect(detail.status).toBe(200);
  expect(Buffer.from(detail.body.raw_body_base64, "base64").equals(Buffer.from(delivery.body))).toBe(true);
  const list = await adminGet(restarted.url, "/events", gw.secrets.adminKey);
  expect(list.body.events.map((e: { id: string }) => e.id)).toEqual([id]);
});
