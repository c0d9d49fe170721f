/**
 * CPU cost of one path of the gateway, for profiling work on a machine too busy for req/s to
 * mean much: starts only the gateway (memory store) and what the path needs, drives it for a few
 * seconds, and prints the gateway's CPU per request (process CPU seconds / requests, from
 * /proc) and, with `BENCH_CPU_PROF=<dir>`, leaves a V8 CPU profile of the gateway there (read
 * it with bench/lib/profile-top.ts). The full comparisons stay in `npm run bench`.
 *
 *   node --import tsx bench/lib/profile-path.ts ingress|proxy|fanout [seconds] [connections]
 *
 * `PROFILE_STORE=disk` runs ingress and fan-out on the disk store instead; `PROFILE_RATE=<n>`
 * offers ingress (and each fan-out phase) a fixed n requests/s (CPU per request compared at equal load, A/B on a busy
 * machine); it prints the CPU of the whole process and of its main thread (the event loop).
 * `fanout` is one HTTP destination: closed loop of `connections` webhooks in flight, then waits
 * until the destination has every accepted event; prints accepted/s, delivered/s and the
 * gateway CPU per delivered event, next to an ingress-only gateway measured the same way.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { startBenchGateway } from "../cases/ingress.ts";
import { runLoad } from "./autocannon-run.ts";
import { cpuSecondsOf, mainThreadCpuSecondsOf } from "./cpu-meter.ts";
import { createWebhookGenerator } from "./signed-webhooks.ts";
import { profileFlags, type Spawned, spawnAndWait } from "./spawn-process.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const FAKE = new URL("../esign-emulator-process.ts", import.meta.url).pathname;
const PEER = new URL("../peers/http-proxy-peer.ts", import.meta.url).pathname;

const [path = "ingress", secondsArg = "5", connectionsArg = "50"] = process.argv.slice(2);
const seconds = Number(secondsArg);

/** The memory store unless `PROFILE_STORE=disk` (then startBenchGateway's disk store in a temp dir). */
function storeConfig(): Record<string, unknown> {
  return process.env.PROFILE_STORE === "disk" ? {} : { store: { driver: "memory" } };
}
const connections = Number(connectionsArg);

async function measured<T extends { total: number }>(gateway: Spawned, work: () => Promise<T>) {
  const pid = gateway.child.pid as number;
  const before = await cpuSecondsOf(pid);
  const mainBefore = await mainThreadCpuSecondsOf(pid);
  const started = performance.now();
  const result = await work();
  const wall = (performance.now() - started) / 1000;
  const cpu = (await cpuSecondsOf(pid)) - before;
  const mainCpu = (await mainThreadCpuSecondsOf(pid)) - mainBefore;
  const per = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, result.total));
  return { result, cpu, wall, usPerRequest: per(cpu), mainUsPerRequest: per(mainCpu) };
}

async function ingress() {
  const { gateway, secrets, cleanup } = await startBenchGateway(storeConfig());
  try {
    const generate = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
    await runLoad(gateway.url, generate, { connections, durationSeconds: 2 });
    const overallRate = Number(process.env.PROFILE_RATE) || undefined;
    const m = await measured(gateway, () =>
      runLoad(gateway.url, generate, { connections, durationSeconds: seconds, overallRate }),
    );
    console.log(
      `ingress (${process.env.PROFILE_STORE === "disk" ? "sqlite" : "memory"} store, default log level): ${m.result.requestsPerSecond} req/s, p99 ${m.result.p99Ms} ms, ` +
        `non-2xx ${m.result.non2xx}; gateway CPU ${m.usPerRequest} µs/request (${Math.round((100 * m.cpu) / m.wall)} % of a core), ` +
        `main thread ${m.mainUsPerRequest} µs/request`,
    );
  } finally {
    await cleanup();
  }
}

async function proxy() {
  let info: { url: string; baseUrl: string; clientId: string; clientSecret: string; agreementId: string } | undefined;
  const fake = await spawnAndWait(["--import", "tsx", FAKE], (line) => {
    if (!line.startsWith('{"fake"')) return undefined;
    info = JSON.parse(line).fake;
    return info?.url;
  });
  const fakeInfo = info as NonNullable<typeof info>;
  const key = `bench_${randomBytes(16).toString("hex")}`;
  const dir = await mkdtemp(join(tmpdir(), "gw-profile-proxy-"));
  const config = {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "memory" },
    sources: [],
    upstreams: [
      {
        id: "esign",
        service: "esign",
        baseUrl: fakeInfo.baseUrl,
        clientId: fakeInfo.clientId,
        clientSecret: "${BENCH_ESIGN_CLIENT_SECRET}",
      },
    ],
    clients: [
      {
        id: "bench",
        apiKeyHashes: [`sha256:${createHash("sha256").update(key).digest("hex")}`],
        scopes: { proxy: [{ upstream: "esign", methods: ["GET"], paths: ["/agreements/**"] }] },
      },
    ],
  };
  await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
  const gateway = await spawnAndWait(
    [...profileFlags(), BIN, "serve", "--config", join(dir, "gateway.json")],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { BENCH_ESIGN_CLIENT_SECRET: fakeInfo.clientSecret },
  );
  try {
    const via = () => ({
      method: "GET",
      path: `/api/esign/agreements/${fakeInfo.agreementId}`,
      headers: { authorization: `Bearer ${key}` },
    });
    await runLoad(gateway.url, via, { connections, durationSeconds: 2 });
    const m = await measured(gateway, () => runLoad(gateway.url, via, { connections, durationSeconds: seconds }));
    const one = await measured(gateway, () => runLoad(gateway.url, via, { connections: 1, durationSeconds: seconds }));
    console.log(
      `proxy GET (default log level): ${m.result.requestsPerSecond} req/s, non-2xx ${m.result.non2xx + one.result.non2xx}; ` +
        `gateway CPU ${m.usPerRequest} µs/request at ${connections} connections, ${one.usPerRequest} µs/request at 1 ` +
        `(${one.result.requestsPerSecond} req/s)`,
    );
    // The node-http-proxy peer measured the same way, so the two CPU costs compare in one run.
    const peer = await spawnAndWait(
      ["--import", "tsx", PEER],
      (line) => (line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined),
      {
        PEER_UPSTREAM_BASE_URL: fakeInfo.baseUrl,
        PEER_CLIENT_ID: fakeInfo.clientId,
        PEER_CLIENT_SECRET: fakeInfo.clientSecret,
        PEER_CLIENT_KEY_SHA256: createHash("sha256").update(key).digest("hex"),
      },
    );
    try {
      await runLoad(peer.url, via, { connections, durationSeconds: 2 });
      const pm = await measured(peer, () => runLoad(peer.url, via, { connections, durationSeconds: seconds }));
      const p1 = await measured(peer, () => runLoad(peer.url, via, { connections: 1, durationSeconds: seconds }));
      console.log(
        `node-http-proxy peer: ${pm.result.requestsPerSecond} req/s; CPU ${pm.usPerRequest} µs/request at ${connections} ` +
          `connections, ${p1.usPerRequest} µs/request at 1 (${p1.result.requestsPerSecond} req/s)`,
      );
    } finally {
      await peer.stop();
    }
  } finally {
    await gateway.stop();
    await fake.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Closed loop of `connections` webhook posts for `seconds` (at most `PROFILE_RATE` per second
 * when set: CPU per event compared at equal load); returns the accepted event ids.
 */
async function drive(url: string, next: ReturnType<typeof createWebhookGenerator>, secondsToRun: number) {
  const agent = new Agent({ connections });
  const accepted: string[] = [];
  const started = performance.now();
  const deadline = started + secondsToRun * 1000;
  const interval = 1000 / (Number(process.env.PROFILE_RATE) || Number.POSITIVE_INFINITY);
  let issued = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const due = started + issued++ * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (performance.now() >= deadline) break;
      const item = next();
      const response = await request(`${url}${item.path}`, {
        dispatcher: agent,
        method: "POST",
        headers: item.headers,
        body: item.body,
      });
      const text = await response.body.text();
      if (response.statusCode === 202) accepted.push((JSON.parse(text) as { id: string }).id);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await agent.close();
  return { accepted, total: accepted.length, seconds: (performance.now() - started) / 1000 };
}

async function fanout() {
  const only = await startBenchGateway({ ...storeConfig(), log: { level: "warn" } });
  let ingressRate: number;
  let ingressUs: number;
  let ingressMainUs: number;
  try {
    const gen = createWebhookGenerator(only.secrets, randomBytes(4).toString("hex"));
    await drive(only.gateway.url, gen, 2);
    const m = await measured(only.gateway, () => drive(only.gateway.url, gen, seconds));
    ingressRate = Math.round(m.result.total / m.result.seconds);
    ingressUs = m.usPerRequest;
    ingressMainUs = m.mainUsPerRequest;
  } finally {
    await only.cleanup();
  }

  const receipts = new Set<string>();
  let lastReceipt = 0;
  const sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      receipts.add(String(req.headers["webhook-id"]));
      lastReceipt = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
  const whsec = `whsec_${randomBytes(32).toString("base64")}`;
  const withSink = await startBenchGateway({
    ...storeConfig(),
    log: { level: "warn" },
    destinations: [
      { id: "http-1", type: "http", url, secrets: [whsec], allowCidrs: ["127.0.0.1/32"], concurrency: 16 },
    ],
    routes: [{ destinations: ["http-1"] }],
  });
  try {
    const gen = createWebhookGenerator(withSink.secrets, randomBytes(4).toString("hex"));
    const pid = withSink.gateway.child.pid as number;
    await drive(withSink.gateway.url, gen, 2);
    const before = await cpuSecondsOf(pid);
    const mainBefore = await mainThreadCpuSecondsOf(pid);
    const started = performance.now();
    const run = await drive(withSink.gateway.url, gen, seconds);
    const deadline = Date.now() + 120_000;
    while (!run.accepted.every((id) => receipts.has(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const cpu = (await cpuSecondsOf(pid)) - before;
    const mainCpu = (await mainThreadCpuSecondsOf(pid)) - mainBefore;
    const delivered = Math.round(run.total / ((lastReceipt - started) / 1000));
    console.log(
      `fan-out, one HTTP destination, ${connections} in flight: ingress only ${ingressRate} events/s ` +
        `(${ingressUs} µs CPU/event, main thread ${ingressMainUs}); with the destination accepted ${Math.round(run.total / run.seconds)}/s, ` +
        `delivered ${delivered}/s = ${(delivered / ingressRate).toFixed(2)}x ingress only (target >= 0.8); ` +
        `gateway CPU ${Math.round((cpu * 1e6) / Math.max(1, run.total))} µs per event received and delivered, ` +
        `main thread ${Math.round((mainCpu * 1e6) / Math.max(1, run.total))}`,
    );
  } finally {
    await withSink.cleanup();
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    sink.closeAllConnections();
  }
}

const paths: Record<string, () => Promise<void>> = { ingress, proxy, fanout };
const run = paths[path];
if (!run) throw new Error(`unknown path "${path}"; one of ${Object.keys(paths).join(", ")}`);
await run();
process.exit(0);
