/**
 * Proxy benchmark: the same `GET /agreements/{id}` sent directly to the e-sign fake and through
 * the gateway (`/api/esign/agreements/{id}`, token fetched and cached by the gateway), in the
 * same run, each process on its own (fake, gateway, autocannon). Prints the added p50 latency
 * (target <= 1 ms), the throughput ratio gateway/direct (target >= 0.7) and the token requests the
 * gateway made during the run (target 1, read from its /metrics). Under 100 connections the p50
 * of a saturated server is mostly queueing (p50 ~ connections / throughput), so the added latency
 * is also measured with one connection: one request in flight, mean round trip = 1000 / req/s.
 * The peer in the same run is node-http-proxy with a client-key check and the cached token
 * injected (bench/peers/http-proxy-peer.ts). Targets (issue 21): gateway/peer >= 1.0 at 100
 * connections, added time per call at one connection and p99 no more than the peer's, 64 MB
 * uploads and downloads at >= 0.9 of direct with bounded memory (proxy-streaming.ts), one token
 * request. CPU per call of every process is printed: on a shared machine it is the steadier figure.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { formatCpu, withCpu } from "../lib/cpu-meter.ts";
import { profileFlags, spawnAndWait } from "../lib/spawn-process.ts";
import { printTargets } from "../lib/target-line.ts";
import { benchLargeBodies } from "./proxy-streaming.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const PEER = new URL("../peers/http-proxy-peer.ts", import.meta.url).pathname;
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
        scopes: { proxy: [{ upstream: "esign", methods: ["GET", "PUT"], paths: ["/agreements/**"] }] },
      },
    ],
    log: { level: "warn" },
  };
  await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
  const gateway = await spawnAndWait(
    [...profileFlags(), BIN, "serve", "--config", join(dir, "gateway.json")],
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

    const peer = await spawnAndWait(
      ["--import", "tsx", PEER],
      (line) => (line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined),
      {
        PEER_UPSTREAM_BASE_URL: fakeInfo.baseUrl,
        PEER_CLIENT_ID: fakeInfo.clientId,
        PEER_CLIENT_SECRET: fakeInfo.clientSecret,
        PEER_CLIENT_KEY_SHA256: createHash("sha256").update(clientKey).digest("hex"),
      },
    );
    const measure = async (url: string, make: typeof direct, pids: Record<string, number | undefined>) => {
      await runLoad(url, make, warm);
      const many = await withCpu(pids, () => runLoad(url, make, load));
      const one = await withCpu(pids, () => runLoad(url, make, single));
      return { many, one };
    };
    let directRun: Awaited<ReturnType<typeof measure>>;
    let viaRun: Awaited<ReturnType<typeof measure>>;
    let peerRun: Awaited<ReturnType<typeof measure>>;
    let large: Awaited<ReturnType<typeof benchLargeBodies>>;
    try {
      directRun = await measure(fakeInfo.url, direct, { upstream: fake.child.pid });
      viaRun = await measure(gateway.url, via, { gateway: gateway.child.pid, upstream: fake.child.pid });
      peerRun = await measure(peer.url, via, { "http-proxy": peer.child.pid, upstream: fake.child.pid });
      const agreement = await fetch(`${fakeInfo.baseUrl}/agreements`, {
        method: "POST",
        headers: { authorization: `Bearer ${fakeInfo.accessToken}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "Large body benchmark" }),
      });
      const { id } = (await agreement.json()) as { id: string };
      large = await benchLargeBodies(
        [
          { label: "direct", apiUrl: fakeInfo.baseUrl, authorization: `Bearer ${fakeInfo.accessToken}` },
          { label: "gateway", apiUrl: `${gateway.url}/api/esign`, authorization: `Bearer ${clientKey}` },
          { label: "node-http-proxy", apiUrl: `${peer.url}/api/esign`, authorization: `Bearer ${clientKey}` },
        ],
        id,
        gateway.child.pid as number,
      );
    } finally {
      await peer.stop();
    }
    const directFigures = directRun.many.result;
    const directSingle = directRun.one.result;
    const viaFigures = viaRun.many.result;
    const viaSingle = viaRun.one.result;
    const peerFigures = peerRun.many.result;
    const peerSingle = peerRun.one.result;

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    const tokenRequests = counterSum(metrics, "gateway_proxy_token_requests_total");
    const rssMb = Math.round((await gateway.rss()) / 1024 / 1024);
    const ratio = Math.round((viaFigures.requestsPerSecond / directFigures.requestsPerSecond) * 100) / 100;
    const ratioPeer = Math.round((viaFigures.requestsPerSecond / peerFigures.requestsPerSecond) * 100) / 100;
    const addedP50 = Math.round((viaFigures.p50Ms - directFigures.p50Ms) * 100) / 100;
    const roundTrip = (f: LoadFigures) => 1000 / Math.max(1, f.requestsPerSecond);
    const addedSingle = Math.round((roundTrip(viaSingle) - roundTrip(directSingle)) * 1000) / 1000;
    const peerAddedSingle = Math.round((roundTrip(peerSingle) - roundTrip(directSingle)) * 1000) / 1000;

    /** Gateway-side CPU per call of one run: CPU share of the named process x wall time / calls. */
    const usPerCall = (
      run: { cpuPercent: Record<string, number>; result: LoadFigures },
      name: string,
      seconds: number,
    ) => Math.round((((run.cpuPercent[name] ?? 0) / 100) * seconds * 1e6) / Math.max(1, run.result.total));
    console.log(`\nproxy: GET /agreements/{id}, ${connections} connections, ${durationSeconds} s each`);
    console.log(`${row("direct to the fake", directFigures)}   cpu: ${formatCpu(directRun.many.cpuPercent)}`);
    console.log(`${row("through the gateway", viaFigures)}   cpu: ${formatCpu(viaRun.many.cpuPercent)}`);
    console.log(`${row("node-http-proxy peer", peerFigures)}   cpu: ${formatCpu(peerRun.many.cpuPercent)}`);
    console.log(`${row("direct, 1 connection", directSingle)}   cpu: ${formatCpu(directRun.one.cpuPercent)}`);
    console.log(`${row("gateway, 1 connection", viaSingle)}   cpu: ${formatCpu(viaRun.one.cpuPercent)}`);
    console.log(`${row("peer, 1 connection", peerSingle)}   cpu: ${formatCpu(peerRun.one.cpuPercent)}`);
    const gatewayUs = usPerCall(viaRun.many, "gateway", durationSeconds);
    const peerUs = usPerCall(peerRun.many, "http-proxy", durationSeconds);
    const gatewayUsOne = usPerCall(viaRun.one, "gateway", single.durationSeconds);
    const peerUsOne = usPerCall(peerRun.one, "http-proxy", single.durationSeconds);
    console.log(
      `CPU per call: gateway ${gatewayUs} µs, node-http-proxy ${peerUs} µs at ${connections} connections; ` +
        `${gatewayUsOne} / ${peerUsOne} µs at 1   ratio gateway/direct ${ratio}   added p50 ${addedP50} ms   gateway RSS ${rssMb} MB`,
    );
    const { rates } = large;
    const upRatio = Number(((rates.gateway?.upload ?? 0) / Math.max(1, rates.direct?.upload ?? 1)).toFixed(2));
    const downRatio = Number(((rates.gateway?.download ?? 0) / Math.max(1, rates.direct?.download ?? 1)).toFixed(2));
    console.log(
      `large bodies (${large.sizeMb} MB, best of 3), MB/s up/down: direct ${rates.direct?.upload}/${rates.direct?.download}, ` +
        `gateway ${rates.gateway?.upload}/${rates.gateway?.download}, node-http-proxy ${rates["node-http-proxy"]?.upload}/${rates["node-http-proxy"]?.download}`,
    );
    const targets = printTargets("proxy", [
      {
        label: `req/s gateway / node-http-proxy, ${connections} connections`,
        value: String(ratioPeer),
        target: ">= 1.0",
        met: ratioPeer >= 1,
      },
      {
        label: "added per call at 1 connection",
        value: `${addedSingle} ms`,
        target: `<= peer's ${peerAddedSingle} ms`,
        met: addedSingle <= peerAddedSingle,
      },
      {
        label: `p99 at ${connections} connections`,
        value: `${viaFigures.p99Ms} ms`,
        target: `<= peer's ${peerFigures.p99Ms} ms`,
        met: viaFigures.p99Ms <= peerFigures.p99Ms,
      },
      {
        label: "gateway CPU per call (report; node-http-proxy alongside)",
        value: `${gatewayUs} µs`,
        target: `(peer ${peerUs} µs)`,
        met: gatewayUs <= peerUs,
      },
      { label: "64 MB upload, gateway / direct", value: String(upRatio), target: ">= 0.9", met: upRatio >= 0.9 },
      { label: "64 MB download, gateway / direct", value: String(downRatio), target: ">= 0.9", met: downRatio >= 0.9 },
      {
        // Bounded: a proxy that buffered a body would grow by at least its 64 MB.
        label: "gateway peak RSS growth while 64 MB bodies pass",
        value: `${large.peakGrowthMb} MB`,
        target: "<= 32 MB (half a body)",
        met: large.peakGrowthMb <= 32,
      },
      { label: "token requests during the run", value: String(tokenRequests), target: "1", met: tokenRequests === 1 },
    ]);
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
      peer_rps: peerFigures.requestsPerSecond,
      peer_added_ms_one_connection: peerAddedSingle,
      ratio_to_node_http_proxy: ratioPeer,
      gateway_cpu_pct: viaRun.many.cpuPercent.gateway ?? 0,
      gateway_cpu_us_per_call: gatewayUs,
      peer_cpu_us_per_call: peerUs,
      peer_p99_ms: peerFigures.p99Ms,
      upload_ratio_to_direct: upRatio,
      download_ratio_to_direct: downRatio,
      large_body_peak_rss_growth_mb: large.peakGrowthMb,
      token_requests: tokenRequests,
      ...targets,
    };
  } finally {
    await cleanup();
    await fake.stop();
  }
}
