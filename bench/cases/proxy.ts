/**
 * Proxy benchmark: the same `GET /agreements/{id}` sent directly to the e-sign fake and through
 * the gateway (`/api/esign/agreements/{id}`, token fetched and cached by the gateway), in the
 * same run, each process on its own (fake, gateway, autocannon). Prints the added p50 latency
 * (target <= 1 ms), the throughput ratio gateway/direct (target >= 0.7) and the token requests the
 * gateway made during the run (target 1, read from its /metrics). Under 100 connections the p50
 * of a saturated server is mostly queueing (p50 ~ connections / throughput), so the added latency
 * is also measured with one connection: one request in flight, mean round trip = 1000 / req/s.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { spawnAndWait } from "../lib/spawn-process.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const FAKE = new URL("../esign-emulator-process.ts", import.meta.url).pathname;

export interface ProxyBenchOptions {
  connections?: number;
  durationSeconds?: number;
}

interface FakeInfo {
  url: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  agreementId: string;
  accessToken: string;
}

function row(name: string, f: LoadFigures) {
  return `${name.padEnd(24)} ${String(f.requestsPerSecond).padStart(8)} req/s   p50 ${String(f.p50Ms).padStart(4)} ms   p99 ${String(f.p99Ms).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}`;
}

/** Sum of a counter over all its label sets in a Prometheus text page. */
function counterSum(metrics: string, name: string): number {
  let sum = 0;
  for (const line of metrics.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

async function startGateway(fake: FakeInfo, clientKey: string) {
  const dir = await mkdtemp(join(tmpdir(), "gw-bench-proxy-"));
  const config = {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "memory" },
    sources: [],
    upstreams: [
      {
        id: "esign",
        service: "esign",
        baseUrl: fake.baseUrl,
        clientId: fake.clientId,
        clientSecret: "${BENCH_ESIGN_CLIENT_SECRET}",
      },
    ],
    clients: [
      {
        id: "bench",
        apiKeyHashes: [`sha256:${createHash("sha256").update(clientKey).digest("hex")}`],
        scopes: { proxy: [{ upstream: "esign", methods: ["GET"], paths: ["/agreements/**"] }] },
      },
    ],
    log: { level: "warn" },
  };
  await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
  const gateway = await spawnAndWait(
    [BIN, "serve", "--config", join(dir, "gateway.json")],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { BENCH_ESIGN_CLIENT_SECRET: fake.clientSecret },
  );
  return {
    gateway,
    async cleanup() {
      await gateway.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs the proxy case and returns its figures. */
export async function benchProxy(options: ProxyBenchOptions = {}): Promise<Record<string, number | string>> {
  const connections = options.connections ?? 100;
  const durationSeconds = options.durationSeconds ?? 10;
  const load = { connections, durationSeconds };
  const warm = { connections, durationSeconds: 2 };
  const single = { connections: 1, durationSeconds: Math.max(2, Math.round(durationSeconds / 3)) };

  let info: FakeInfo | undefined;
  const fake = await spawnAndWait(["--import", "tsx", FAKE], (line) => {
    if (!line.startsWith('{"fake"')) return undefined;
    info = (JSON.parse(line) as { fake: FakeInfo }).fake;
    return info.url;
  });
  const fakeInfo = info as FakeInfo;
  const clientKey = `bench_${randomBytes(16).toString("hex")}`;
  const { gateway, cleanup } = await startGateway(fakeInfo, clientKey);
  try {
    const path = `/agreements/${fakeInfo.agreementId}`;
    const directUrl = `${fakeInfo.baseUrl}${path}`;
    const viaUrl = `${gateway.url}/api/esign${path}`;
    const direct = () => ({
      method: "GET",
      path: new URL(directUrl).pathname,
      headers: { authorization: `Bearer ${fakeInfo.accessToken}` },
    });
    const via = () => ({
      method: "GET",
      path: new URL(viaUrl).pathname,
      headers: { authorization: `Bearer ${clientKey}` },
    });

    await runLoad(fakeInfo.url, direct, warm);
    const directFigures = await runLoad(fakeInfo.url, direct, load);
    const directSingle = await runLoad(fakeInfo.url, direct, single);
    await runLoad(gateway.url, via, warm);
    const viaFigures = await runLoad(gateway.url, via, load);
    const viaSingle = await runLoad(gateway.url, via, single);

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    const tokenRequests = counterSum(metrics, "gateway_proxy_token_requests_total");
    const rssMb = Math.round((await gateway.rss()) / 1024 / 1024);
    const ratio = Math.round((viaFigures.requestsPerSecond / directFigures.requestsPerSecond) * 100) / 100;
    const addedP50 = Math.round((viaFigures.p50Ms - directFigures.p50Ms) * 100) / 100;
    const roundTrip = (f: LoadFigures) => 1000 / Math.max(1, f.requestsPerSecond);
    const addedSingle = Math.round((roundTrip(viaSingle) - roundTrip(directSingle)) * 1000) / 1000;

    console.log(`\nproxy: GET /agreements/{id}, ${connections} connections, ${durationSeconds} s each`);
    console.log(row("direct to the fake", directFigures));
    console.log(row("through the gateway", viaFigures));
    console.log(row("direct, 1 connection", directSingle));
    console.log(row("gateway, 1 connection", viaSingle));
    console.log(
      `added p50 ${addedP50} ms (target <= 1; one connection: ${addedSingle} ms per call)   ratio gateway/direct ${ratio} (target >= 0.7)   token requests ${tokenRequests} (target 1)   gateway RSS ${rssMb} MB`,
    );
    return {
      direct_rps: directFigures.requestsPerSecond,
      direct_p50_ms: directFigures.p50Ms,
      gateway_rps: viaFigures.requestsPerSecond,
      gateway_p50_ms: viaFigures.p50Ms,
      gateway_p99_ms: viaFigures.p99Ms,
      gateway_non2xx: viaFigures.non2xx,
      added_p50_ms: addedP50,
      added_ms_one_connection: addedSingle,
      ratio,
      token_requests: tokenRequests,
    };
  } finally {
    await cleanup();
    await fake.stop();
  }
}
