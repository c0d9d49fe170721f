/**
 * `npm run bench -- hostile`: what hostile webhook traffic costs a real gateway process.
 * CPU per rejected request (forged 64 KiB bodies: the first 20 verified freely, then the same
 * sender on the failed-verification read budget, two bodies at a time; then bodies without a
 * signature header, refused before reading), and
 * RSS growth while 40 connections drip a body one byte per packet. `HOSTILE_SECONDS` (default 5)
 * sets each phase's length.
 */
import { readFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { defaultTestConfig, startGatewayProcess } from "../../test/helpers/gateway-process.ts";

const SECONDS = Number(process.env.HOSTILE_SECONDS ?? 5);

async function cpuMicros(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.split(" ") ?? [];
  // utime and stime, in clock ticks (100 per second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

async function rssBytes(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;
}

function send(url: URL, headers: Record<string, string>, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: "POST", path: "/webhooks/esign", agent: false, headers },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

/** Sends requests back to back for the phase; returns CPU µs of the gateway per answer. */
async function phase(pid: number, url: URL, headers: Record<string, string>, body: Buffer) {
  const cpuBefore = await cpuMicros(pid);
  const end = Date.now() + SECONDS * 1000;
  let count = 0;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (Date.now() < end) {
      const status = await send(url, { ...headers, "content-length": String(body.length) }, body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      count++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { cpuMicrosPerRequest: ((await cpuMicros(pid)) - cpuBefore) / count, count, statuses: [...statuses] };
}

export async function benchHostile(): Promise<Record<string, number | string>> {
  const { mkdtemp } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = await mkdtemp(join(tmpdir(), "gw-bench-hostile-"));
  const config = defaultTestConfig(dataDir, `sha256:${"0".repeat(64)}`) as Record<string, unknown>;
  config.log = { level: "error" };
  config.ingress = { failedVerificationLimit: { maxFailures: 20, windowSeconds: 60, blockSeconds: 600 } };
  const gateway = await startGatewayProcess({ config, dataDir });
  const pid = gateway.child.pid as number;
  const url = new URL(gateway.url);
  const body = Buffer.alloc(64 * 1024, "{");
  try {
    const forged = { "content-type": "application/json", "x-svc-signature": `sha256=${"0".repeat(64)}` };
    // The first 20 are verified (and fail); the rest are read and verified two at a time (the budget).
    const limited = await phase(pid, url, forged, body);
    const unsigned = await phase(pid, url, { "content-type": "application/json" }, body);
    const drip = await dripGrowth(pid, url);
    const result = {
      cpuMicrosPerLimitedRequest: Math.round(limited.cpuMicrosPerRequest),
      limitedStatuses: JSON.stringify(limited.statuses),
      cpuMicrosPerUnsignedRequest: Math.round(unsigned.cpuMicrosPerRequest),
      dripBytesSent: drip.sent,
      dripRssGrowthBytes: drip.growth,
      dripRssBytesPerBodyByte: Math.round((drip.growth / Math.max(1, drip.sent)) * 10) / 10,
    };
    console.log(result);
    return result;
  } finally {
    await gateway.kill();
  }
}

async function dripGrowth(pid: number, url: URL) {
  const before = await rssBytes(pid);
  const sockets: Socket[] = [];
  for (let i = 0; i < 40; i++) {
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress: "127.0.0.2", noDelay: true });
    socket.on("error", () => {});
    socket.write(
      `POST /webhooks/esign HTTP/1.1\r\nHost: ${url.host}\r\nX-Svc-Signature: sha256=${"1".repeat(64)}\r\n` +
        "Content-Length: 1048576\r\n\r\n",
    );
    sockets.push(socket);
  }
  let sent = 0;
  const end = Date.now() + SECONDS * 1000;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      for (const socket of sockets) {
        if (socket.writable && socket.writableLength < 64) {
          socket.write("{");
          sent++;
        }
      }
      if (Date.now() >= end) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  const growth = (await rssBytes(pid)) - before;
  for (const socket of sockets) socket.destroy();
  return { sent, growth };
}
