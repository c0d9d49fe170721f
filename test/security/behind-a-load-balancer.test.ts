/**
 * Issue 18 rows 2, 3 and 10 (X-Forwarded-For) against real gateway processes: with the default
 * config one address (a load balancer) holding 5,000 connections is served; 100 forged
 * deliveries from an address never get its correctly signed one refused (the address is put on a
 * read budget instead, and a signed delivery waits for a slot); with `trustProxy: "loopback"`
 * the per-client limits follow X-Forwarded-For (non-IP entries ignored); without it, the header
 * is never believed and its arrival is logged once.
 */
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, type SignedDelivery } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";
import { openStreamedRequest } from "../ingress/streamed-request.ts";

const WRONG_SIGNATURE = `sha256=${"0".repeat(64)}`;
const running: GatewayProcess[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.kill();
});

type Config = Record<string, any>;

async function start(edit: (config: Config) => void = () => {}, shellPrefix?: string) {
  const gateway = await startEditedGatewayProcess(
    (config: Config) => {
      // The shared test config turns the failed-verification budget off; these tests need the default.
      delete config.ingress;
      edit(config);
    },
    { shellPrefix },
  );
  running.push(gateway);
  return gateway;
}

interface Sent {
  status: number;
  body: string;
}

/** Sends `delivery` (or a GET when absent) from `localAddress` with `headers`. */
function send(
  gateway: GatewayProcess,
  path: string,
  options: { delivery?: SignedDelivery; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<Sent> {
  const url = new URL(gateway.url);
  const body = options.delivery?.body;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: body ? "POST" : "GET",
        path,
        localAddress: options.localAddress ?? "127.0.0.1",
        agent: false,
        headers: {
          ...options.delivery?.headers,
          ...(body ? { "content-length": String(body.byteLength) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function forged(gateway: GatewayProcess): Promise<SignedDelivery> {
  const delivery = await esignDelivery(gateway.secrets.esign);
  return { ...delivery, headers: { ...delivery.headers, "x-svc-signature": WRONG_SIGNATURE } };
}

async function metric(gateway: GatewayProcess, name: string): Promise<number> {
  const text = await (
    await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.secrets.adminKey}` } })
  ).text();
  const line = text.split("\n").find((l) => l.startsWith(name));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** Sends GET /healthz on an open socket; resolves with the status line (or "closed"). */
function healthOnSocket(socket: Socket, host: string): Promise<string> {
  return new Promise<string>((resolve) => {
    let data = "";
    const onData = (chunk: Buffer) => {
      data += chunk;
      if (!data.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve(data.slice(0, 12));
    };
    const onClose = () => resolve("closed");
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  });
}

test("default caps: 5,000 concurrent keep-alive connections from one address are all served", async () => {
  // Only the keep-alive timeout is raised above the load balancer's idle timeout, as
  // docs/behind-a-load-balancer.md says to; the connection caps are the defaults.
  const gateway = await start((config) => {
    config.server.keepAliveTimeoutMs = 65_000;
  }, "ulimit -n 12000");
  const url = new URL(gateway.url);
  const sockets: Socket[] = [];
  const first: Promise<string>[] = [];
  // In batches, so the listen backlog never overflows (a dropped SYN is retried a second later).
  for (let batch = 0; batch < 20; batch++) {
    const connected: Promise<void>[] = [];
    for (let i = 0; i < 250; i++) {
      const socket = connect({ port: Number(url.port), host: "127.0.0.1", localAddress: "127.0.0.1" });
      socket.on("error", () => {});
      sockets.push(socket);
      connected.push(
        new Promise<void>((resolve) => {
          socket.once("connect", () => {
            first.push(healthOnSocket(socket, url.host));
            resolve();
          });
          socket.once("close", () => resolve());
        }),
      );
    }
    await Promise.all(connected);
  }
  const firstRound = await Promise.all(first);
  expect(firstRound.filter((s) => s === "HTTP/1.1 200")).toHaveLength(5000);
  // All 5,000 are still open at once: each is served again on its kept-alive connection.
  const secondRound = await Promise.all(sockets.map((socket) => healthOnSocket(socket, url.host)));
  for (const socket of sockets) socket.destroy();
  expect(secondRound.filter((s) => s === "HTTP/1.1 200")).toHaveLength(5000);
}, 120_000);

test("100 forged deliveries, then a signed one from the same address: 202; the forger is budgeted, not refused", async () => {
  const gateway = await start();
  const statuses = new Set<number>();
  for (let i = 0; i < 100; i++)
    statuses.add((await send(gateway, "/webhooks/esign", { delivery: await forged(gateway) })).status);
  expect([...statuses]).toEqual([401]);
  expect(
    (await send(gateway, "/webhooks/esign", { delivery: await esignDelivery(gateway.secrets.esign) })).status,
  ).toBe(202);

  // The budget: two bodies of the address are read at a time. Two forged ones that never finish
  // hold both slots; a signed delivery waits (counted) and is served once a slot frees.
  const holders = [0, 1].map(() =>
    openStreamedRequest(
      `${gateway.url}/webhooks/esign`,
      { "content-type": "application/json", "x-svc-signature": WRONG_SIGNATURE, "content-length": "100" },
      "127.0.0.1",
    ),
  );
  for (const holder of holders) {
    holder.answer.catch(() => {});
    await holder.write("{");
  }
  const waitsBefore = await metric(gateway, "gateway_webhooks_budget_waits_total");
  const signed = send(gateway, "/webhooks/esign", { delivery: await esignDelivery(gateway.secrets.esign) });
  await waitFor("the signed delivery to wait for a slot", async () => {
    return (await metric(gateway, "gateway_webhooks_budget_waits_total")) > waitsBefore;
  });
  await holders[0]?.end("x".repeat(99));
  expect((await holders[0]?.answer)?.status).toBe(401);
  expect((await signed).status).toBe(202);
  holders[1]?.destroy();
}, 60_000);

test('trustProxy "loopback": limits follow X-Forwarded-For, client A\'s own signed delivery is accepted', async () => {
  const gateway = await start((config) => {
    config.server.trustProxy = "loopback";
    config.server.maxConnectionsPerAddress = 3;
  });
  const A = { "x-forwarded-for": "203.0.113.5" };
  const B = { "x-forwarded-for": "198.51.100.7, 203.0.113.6" };

  // Client A's forged deliveries budget A only; A's own signed delivery is still accepted.
  for (let i = 0; i < 30; i++) {
    expect((await send(gateway, "/webhooks/esign", { delivery: await forged(gateway), headers: A })).status).toBe(401);
  }
  const signedA = await esignDelivery(gateway.secrets.esign);
  expect((await send(gateway, "/webhooks/esign", { delivery: signedA, headers: A })).status).toBe(202);

  // The per-address cap counts A's requests in flight, not the proxy's.
  const open = [0, 1, 2].map(() =>
    openStreamedRequest(
      `${gateway.url}/webhooks/esign`,
      { ...A, "content-type": "application/json", "x-svc-signature": WRONG_SIGNATURE, "content-length": "100" },
      "127.0.0.1",
    ),
  );
  for (const request of open) {
    request.answer.catch(() => {});
    await request.write("{");
  }
  const fourth = await send(gateway, "/webhooks/esign", {
    delivery: await esignDelivery(gateway.secrets.esign),
    headers: A,
  });
  expect(fourth.status).toBe(429);
  expect(JSON.parse(fourth.body).error.code).toBe("rate_limited");
  const fromB = await send(gateway, "/webhooks/esign", {
    delivery: await esignDelivery(gateway.secrets.esign),
    headers: B,
  });
  expect(fromB.status).toBe(202);
  for (const request of open) request.destroy();
  await waitFor("A's slots to free", async () => {
    const again = await send(gateway, "/webhooks/esign", {
      delivery: await esignDelivery(gateway.secrets.esign),
      headers: A,
    });
    return again.status === 202;
  });

  // The client address decides who may read /metrics without a token (loopback only): a
  // forwarded public client may not; an entry that is not an IP address is ignored.
  expect((await send(gateway, "/metrics", { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(401);
  expect((await send(gateway, "/metrics", { headers: { "x-forwarded-for": "not-an-ip" } })).status).toBe(200);
  expect((await send(gateway, "/metrics", { headers: { "x-forwarded-for": "203.0.113.9, unknown" } })).status).toBe(
    401,
  );
}, 60_000);

test("trustProxy off: X-Forwarded-For is never believed, and its arrival is logged once", async () => {
  const gateway = await start();
  // 127.0.0.2 is not in the loopback allow-list of /metrics; a spoofed header does not make it so.
  const spoofed = await send(gateway, "/metrics", {
    headers: { "x-forwarded-for": "127.0.0.1" },
    localAddress: "127.0.0.2",
  });
  expect(spoofed.status).toBe(401);
  for (let i = 0; i < 3; i++) await send(gateway, "/healthz", { headers: { "x-forwarded-for": "203.0.113.1" } });
  await gateway.kill();
  const warnings = gateway.lines.filter((line) => line.includes("X-Forwarded-For arrived"));
  expect(warnings).toHaveLength(1);
  expect(JSON.parse(warnings[0] as string)).toMatchObject({ level: "warn" });
  expect(warnings[0]).toContain("trustProxy");
});
