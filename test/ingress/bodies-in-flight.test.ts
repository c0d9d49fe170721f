/**
 * The process-wide budget of webhook body bytes in flight (`ingress.maxBodyBytesInFlight`,
 * src/ingress/body-budget.ts, docs/ingress-and-verification.md#bodies-in-flight) against a real
 * gateway process, entered as an upstream (or an attacker) does: raw sockets that send a signed
 * webhook's headers and part of its body, and hold the rest.
 *
 * With a 128 KiB budget, two stalled 60 KB bodies hold most of it: a third body is refused
 * mid-body with 503 `overloaded` (read on its socket before it finished sending), a small one
 * still fits and is recorded, the stalled ones are recorded when they finish, the gauge returns
 * to zero, and the refused webhook's retry is recorded. Nothing refused is written.
 */
import { connect, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { logLinesOf } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  listAllEventIds,
  postWebhook,
  readAnswer,
  type SignedDelivery,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";

const BUDGET = 128 * 1024;
let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startEditedGatewayProcess((config) => {
    for (const source of config.sources) (source as Record<string, unknown>).bodyLimitBytes = 64 * 1024;
    (config.ingress as Record<string, unknown>).maxBodyBytesInFlight = BUDGET;
  });
});
afterAll(async () => {
  await gw?.kill();
});
/** Every raw connection a test opened, closed after it whatever happened (no stalled body outlives its test). */
const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/** A signed e-sign delivery whose body is about `bytes` long. */
async function deliveryOf(bytes: number): Promise<SignedDelivery & { id: string }> {
  const id = `evt-budget-${globalThis.crypto.randomUUID()}`;
  const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed", {
    uniqueId: id,
    edit: (body) => {
      (body as { note?: string }).note = "x".repeat(Math.max(0, bytes - 400));
    },
  });
  return { ...delivery, id };
}

/** A raw HTTP/1.1 exchange: the head and the first `sent` bytes of the body now, the rest on `finish`. */
function startExchange(delivery: SignedDelivery, sent: number) {
  const target = new URL(`${gw.url}/webhooks/esign`);
  const socket: Socket = connect({ port: Number(target.port), host: target.hostname });
  opened.push(socket);
  let received = "";
  socket.on("data", (data: Buffer) => {
    received += data.toString("latin1");
  });
  socket.on("error", () => {});
  const answered = new Promise<string>((resolve) => {
    socket.on("data", () => {
      // One answer: the head and a body of its Content-Length, or chunks up to the last one.
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const length = /content-length: (\d+)/i.exec(received.slice(0, end))?.[1];
      const whole =
        length === undefined ? received.endsWith("\r\n0\r\n\r\n") : received.length >= end + 4 + Number(length);
      if (whole) resolve(received);
    });
    socket.once("close", () => resolve(received));
  });
  const head = [`POST ${target.pathname} HTTP/1.1`, `Host: ${target.host}`, `Content-Length: ${delivery.body.length}`];
  for (const [name, value] of Object.entries(delivery.headers)) head.push(`${name}: ${value}`);
  socket.write(`${head.join("\r\n")}\r\n\r\n`);
  socket.write(delivery.body.subarray(0, sent));
  return {
    answered,
    finish: () => socket.write(delivery.body.subarray(sent)),
    close: () => socket.destroy(),
  };
}

/** The gauge of body bytes in flight, from `/metrics` (open to loopback by default). */
async function bytesInFlight(): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("gateway_webhook_body_bytes_in_flight "));
  return Number(line?.split(" ")[1]);
}

/** Polls the gauge until `ok` holds (a condition, not a timed wait). */
async function gaugeUntil(ok: (bytes: number) => boolean): Promise<number> {
  let last = Number.NaN;
  for (let i = 0; i < 2_000; i++) {
    last = await bytesInFlight();
    if (ok(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the gauge never got there (last ${last})`);
}

it("past the budget a body is refused mid-body with 503 overloaded; the others are recorded; the gauge returns to 0", async () => {
  expect(await bytesInFlight()).toBe(0);
  const [a, b, c, small] = await Promise.all([
    deliveryOf(60_000),
    deliveryOf(60_000),
    deliveryOf(30_000),
    deliveryOf(1_000),
  ]);
  // Two bodies stall 100 bytes short of their end: about 119,800 bytes of the 131,072 held.
  const first = startExchange(a, a.body.length - 100);
  const second = startExchange(b, b.body.length - 100);
  const held = a.body.length + b.body.length - 200;
  expect(await gaugeUntil((bytes) => bytes === held)).toBe(held);

  // A third body does not fit: refused while it is still being sent (its end never goes out).
  const third = startExchange(c, 20_000);
  const refused = await third.answered;
  third.close();
  expect(refused).toMatch(/^HTTP\/1\.1 503 /);
  expect(refused.toLowerCase()).toContain("retry-after: 1\r\n");
  expect(refused.toLowerCase()).toContain("connection: close\r\n");
  expect(refused.toLowerCase()).toMatch(/x-request-id: \S+/);
  const envelope = JSON.parse(refused.slice(refused.indexOf("{"), refused.lastIndexOf("}") + 1));
  expect(Object.keys(envelope)).toEqual(["error"]);
  expect(envelope.error.code).toBe("overloaded");
  // The refused body's bytes are given back at once; the stalled ones still hold theirs.
  expect(await gaugeUntil((bytes) => bytes === held)).toBe(held);

  // A small webhook still fits beside them.
  const smallAnswer = await readAnswer(await postWebhook(gw.url, "esign", small));
  expect(smallAnswer.status).toBe(202);

  // The stalled bodies finish: both recorded.
  first.finish();
  second.finish();
  const [firstAnswer, secondAnswer] = await Promise.all([first.answered, second.answered]);
  first.close();
  second.close();
  expect(firstAnswer).toMatch(/^HTTP\/1\.1 202 /);
  expect(secondAnswer).toMatch(/^HTTP\/1\.1 202 /);
  expect(await gaugeUntil((bytes) => bytes === 0)).toBe(0);

  // The upstream's retry of the refused webhook is recorded.
  expect((await readAnswer(await postWebhook(gw.url, "esign", c))).status).toBe(202);
  const recorded = await listAllEventIds(gw.url, gw.secrets.adminKey, "source=esign");
  expect(recorded).toHaveLength(4);

  // One warning for the operator, naming the setting, without any part of a body.
  const warnings = logLinesOf(gw.lines).filter((line) => line.msg.includes("maxBodyBytesInFlight"));
  expect(warnings.map((line) => line.level)).toEqual(["warn"]);
  expect(gw.lines.join("\n")).not.toContain("x".repeat(100));
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics).toContain('gateway_webhooks_rejected_total{reason="over_budget",source="esign"} 1');
});

it("a flood of stalled bodies cannot hold more than the budget: the ones past it are refused, the gateway answers on", async () => {
  // Twenty connections each send 10,000 bytes of a body and stall: at most 13 fit in 128 KiB.
  const deliveries = await Promise.all(Array.from({ length: 20 }, () => deliveryOf(20_000)));
  let refused = 0;
  let other = 0;
  const exchanges = deliveries.map((delivery) => {
    const exchange = startExchange(delivery, 10_000);
    exchange.answered.then((answer) => {
      if (answer.startsWith("HTTP/1.1 503 ") && answer.includes('"overloaded"')) refused++;
      else other++;
    });
    return exchange;
  });
  // Settled: every connection either refused or holding all it sent (a refused body gives back
  // what it held at once).
  const held = await gaugeUntil((bytes) => bytes % 10_000 === 0 && refused + bytes / 10_000 === 20);
  expect(held).toBeGreaterThan(0);
  expect(held).toBeLessThanOrEqual(BUDGET);
  expect(other).toBe(0);
  expect(refused).toBeGreaterThanOrEqual(20 - Math.floor(BUDGET / 10_000));
  // A health check is answered meanwhile, and a webhook small enough to fit is recorded.
  expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  if (BUDGET - held >= 2_000) {
    expect((await readAnswer(await postWebhook(gw.url, "esign", await deliveryOf(1_000)))).status).toBe(202);
  }
  // The stalled clients go away: their bytes are given back.
  for (const exchange of exchanges) exchange.close();
  expect(await gaugeUntil((bytes) => bytes === 0)).toBe(0);
  expect((await readAnswer(await postWebhook(gw.url, "esign", await deliveryOf(30_000)))).status).toBe(202);
});
