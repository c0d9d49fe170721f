/**
 * Issue 12 rows 1-3 against a real gateway process: a body dripped one byte per packet costs
 * memory in proportion to its bytes; a delivery whose signature header is missing is answered
 * before its body is sent; an address that keeps failing verification is put on a read budget
 * but its signed deliveries are still accepted (issue 18; the budget itself is tested in
 * behind-a-load-balancer.test.ts); a slow body hits the source's deadline;
 * one address holding thousands of idle connections cannot starve another, and its idle
 * connections are closed by the header timeout.
 *
 * `HARDEN_DRIP_BYTES` (default 400000) sets how much the drip sends in total.
 */
import { readFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, expect, test } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, type SignedDelivery } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";
import { openStreamedRequest } from "../ingress/streamed-request.ts";

const WRONG_SIGNATURE = `sha256=${"0".repeat(64)}`;
const DRIP_BYTES = Number(process.env.HARDEN_DRIP_BYTES ?? 400_000);
const running: GatewayProcess[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.kill();
});

async function start(edit: (config: Record<string, any>) => void, shellPrefix?: string) {
  const gateway = await startEditedGatewayProcess(edit as never, { shellPrefix });
  running.push(gateway);
  return gateway;
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

/** POSTs a delivery from `localAddress`; resolves with status and body. */
function post(gateway: GatewayProcess, delivery: SignedDelivery, localAddress = "127.0.0.1", source = "esign") {
  const url = new URL(gateway.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: `/webhooks/${source}`,
        localAddress,
        agent: false,
        headers: { ...delivery.headers, "content-length": String(delivery.body.byteLength) },
      },
      (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(delivery.body);
  });
}

test("row 1: 40 connections dripping a body byte by byte grow memory with the bytes, not the packets", async () => {
  const gateway = await start((config) => {
    config.sources[0].bodyTimeoutMs = 600_000;
  });
  const url = new URL(gateway.url);
  const pid = gateway.child.pid as number;
  const before = await rssBytes(pid);
  const sockets: Socket[] = [];
  for (let i = 0; i < 40; i++) {
    const socket = connect({ port: Number(url.port), host: url.hostname, noDelay: true });
    socket.on("error", () => {});
    socket.write(
      `POST /webhooks/esign HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `X-Svc-Signature: ${WRONG_SIGNATURE}\r\nContent-Length: 1048576\r\n\r\n`,
    );
    sockets.push(socket);
  }
  let sent = 0;
  // One byte per write with Nagle off: one TCP packet per byte. Bounded by the byte target.
  await new Promise<void>((resolve) => {
    const drip = setInterval(() => {
      for (const socket of sockets) {
        if (sent >= DRIP_BYTES) break;
        if (socket.writable && socket.writableLength < 64) {
          socket.write("{");
          sent++;
        }
      }
      if (sent >= DRIP_BYTES) {
        clearInterval(drip);
        resolve();
      }
    }, 1);
  });
  const growth = (await rssBytes(pid)) - before;
  for (const socket of sockets) socket.destroy();
  // Before the fix: ~350 bytes of memory per body byte (140 MB for 400 KB). Now: one buffer per
  // body, a 16 KiB start, plus the process's ordinary noise.
  expect(growth).toBeLessThan(48 * 1024 * 1024 + 8 * sent);
  expect(growth).toBeLessThan(100 * sent);
  expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
}, 180_000);

test("row 2: a missing signature is answered 401 before the declared 1 MiB body is sent", async () => {
  const gateway = await start(() => {});
  const request = openStreamedRequest(`${gateway.url}/webhooks/esign`, {
    "content-type": "application/json",
    "content-length": String(1024 * 1024),
  });
  const answer = await request.answer;
  request.destroy();
  expect(answer.status).toBe(401);
  expect(answer.headers.connection).toBe("close");
  expect(JSON.parse(answer.text).error.details.reason).toBe("missing_signature");
});

test("row 2 (issue 18): an address that keeps failing is budgeted, never refused; others and allow-listed ones are untouched", async () => {
  const gateway = await start((config) => {
    config.ingress = {
      failedVerificationLimit: { maxFailures: 3, windowSeconds: 60, blockSeconds: 30, allowAddresses: ["127.0.0.3"] },
    };
  });
  const forged = async () => {
    const delivery = await esignDelivery(gateway.secrets.esign);
    return { ...delivery, headers: { ...delivery.headers, "x-svc-signature": WRONG_SIGNATURE } };
  };
  for (let i = 0; i < 10; i++) expect((await post(gateway, await forged())).status).toBe(401);
  // A correctly signed delivery from the budgeted address is still accepted.
  expect((await post(gateway, await esignDelivery(gateway.secrets.esign))).status).toBe(202);
  // Another address is not affected; an allow-listed one is never budgeted.
  expect((await post(gateway, await esignDelivery(gateway.secrets.esign), "127.0.0.2")).status).toBe(202);
  for (let i = 0; i < 6; i++) expect((await post(gateway, await forged(), "127.0.0.3")).status).toBe(401);
  expect((await post(gateway, await esignDelivery(gateway.secrets.esign), "127.0.0.3")).status).toBe(202);
});

test("rows 1 and 3: a body slower than the source's deadline is cut off with 408", async () => {
  const gateway = await start((config) => {
    config.sources[0].bodyTimeoutMs = 300;
  });
  const request = openStreamedRequest(`${gateway.url}/webhooks/esign`, {
    "content-type": "application/json",
    "x-svc-signature": WRONG_SIGNATURE,
    "content-length": "100",
  });
  await request.write("{");
  const answer = await request.answer;
  request.destroy();
  expect(answer.status).toBe(408);
  expect(answer.headers.connection).toBe("close");
  expect(JSON.parse(answer.text).error.code).toBe("request_timeout");
});

test("row 3: thousands of idle connections from one address neither starve another nor outlive the header timeout", async () => {
  const gateway = await start((config) => {
    config.server.headersTimeoutMs = 2000;
    config.server.maxConnectionsPerAddress = 100;
  }, "ulimit -n 2048");
  const url = new URL(gateway.url);
  const flood: Promise<void>[] = [];
  let open = 0;
  // In batches, so the listen backlog never overflows (a dropped SYN is retried seconds later).
  for (let batch = 0; batch < 12; batch++) {
    const connected: Promise<void>[] = [];
    for (let i = 0; i < 250; i++) {
      const socket = connect({ port: Number(url.port), host: "127.0.0.1", localAddress: "127.0.0.1" });
      socket.on("error", () => {});
      // Flowing, so the server's close is seen ('end' waits for the data to be read).
      socket.resume();
      connected.push(
        new Promise<void>((resolve) => {
          socket.once("connect", () => {
            open++;
            resolve();
          });
          socket.once("close", () => resolve());
        }),
      );
      flood.push(new Promise<void>((resolve) => socket.once("close", () => resolve())));
    }
    await Promise.all(connected);
  }
  const started = Date.now();
  const delivery = await esignDelivery(gateway.secrets.esign);
  const served = await post(gateway, delivery, "127.0.0.2");
  expect(served.status).toBe(202);
  const health = await new Promise<number>((resolve, reject) => {
    httpRequest(
      { host: url.hostname, port: url.port, path: "/healthz", localAddress: "127.0.0.2", agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    )
      .on("error", reject)
      .end();
  });
  expect(health).toBe(200);
  // Every flood connection is closed: the excess at once, the 100 admitted by the header timeout.
  const closedInTime = await Promise.race([
    Promise.all(flood).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000).unref()),
  ]);
  expect(closedInTime).toBe(true);
  expect(open).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(15_000);
}, 60_000);
