/**
 * Fan-out benchmark, end to end: signed webhooks in, four destinations out (two signed HTTP
 * sinks, Redis Streams, SMTP), all real and on loopback. Measured in one run:
 *   - ingress only: a gateway without routes, closed loop (32 in flight): accepted events/s;
 *   - latency: the fan-out gateway at a fixed rate, from the client seeing the 202 to each
 *     destination receiving the event (p50/p99 per destination and over all four);
 *   - throughput: closed loop for the same time, events/s until the last of the four
 *     destinations has every event (sustained end-to-end rate), as a ratio of ingress only;
 *   - the same with one HTTP destination only.
 * Targets: one HTTP destination delivered >= 0.8 of ingress only; four destinations >= 0.5.
 * Destinations whose server is missing here (redis-server) are left out and named in the output.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import type { LoadRequest } from "../lib/autocannon-run.ts";
import { withCpu } from "../lib/cpu-meter.ts";
import { createWebhookGenerator, type WebhookSecrets } from "../lib/signed-webhooks.ts";
import { checkTarget } from "../lib/targets.ts";
import { startBenchGateway } from "./ingress.ts";

export interface FanoutOptions {
  /** Seconds of each load phase. Default 10. */
  durationSeconds?: number;
  /** Events per second of the latency phase (well below saturation). Default 100. */
  rate?: number;
  /** Requests in flight in the closed-loop phases. Default 32. */
  concurrency?: number;
}

type Receipts = Map<string, number>;

interface Destination {
  id: string;
  config: Record<string, unknown>;
  receipts: Receipts;
  close(): Promise<void>;
}

const WHSEC = `whsec_${randomBytes(32).toString("base64")}`;

export async function httpReceiver(id: string): Promise<Destination> {
  const receipts: Receipts = new Map();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      receipts.set(String(req.headers["webhook-id"]), performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    id,
    receipts,
    config: { id, type: "http", url, secrets: [WHSEC], allowCidrs: ["127.0.0.1/32"], concurrency: 16 },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  };
}

async function redisReceiver(id: string): Promise<Destination | undefined> {
  const redis = await startRedisServer().catch(() => undefined);
  if (!redis) return undefined;
  const { Redis } = await import("ioredis");
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  const receipts: Receipts = new Map();
  let running = true;
  const loop = (async () => {
    // From the start of the (fresh) stream: "$" would drop entries added between two reads
    // before the first entry arrived (each XREAD with "$" starts at that moment's end).
    let last = "0-0";
    while (running) {
      const batch = (await client.xread("COUNT", 1000, "BLOCK", 200, "STREAMS", "gw-bench", last)) as
        | [string, [string, string[]][]][]
        | null;
      const now = performance.now();
      for (const [, entries] of batch ?? []) {
        for (const [entryId, fields] of entries) {
          last = entryId;
          const at = fields.indexOf("id");
          if (at !== -1) receipts.set(String(fields[at + 1]), now);
        }
      }
    }
  })();
  return {
    id,
    receipts,
    config: { id, type: "queue", url: redis.url, stream: "gw-bench", maxLen: 1_000_000, concurrency: 16 },
    async close() {
      running = false;
      await loop.catch(() => {});
      client.disconnect();
      await redis.stop();
    },
  };
}

async function smtpReceiver(id: string): Promise<Destination> {
  const { SMTPServer } = await import("smtp-server");
  const receipts: Receipts = new Map();
  const server = new SMTPServer({
    secure: false,
    logger: false,
    authOptional: true,
    disableReverseLookup: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream, _session, callback) {
      let head = "";
      stream.on("data", (chunk: Buffer) => {
        if (head.length < 8192) head += chunk.toString("latin1");
      });
      stream.on("end", () => {
        const match = /^message-id:\s*<(evt_[0-9a-f]{32})\./im.exec(head);
        if (match?.[1]) receipts.set(match[1], performance.now());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    id,
    receipts,
    config: {
      id,
      type: "email",
      host: "127.0.0.1",
      allowPrivateNetworks: true,
      port,
      from: "Gateway <gateway@example.com>",
      to: ["ops@example.com"],
      concurrency: 8,
      maxConnections: 8,
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Posts webhooks; `rate` undefined means closed loop with `concurrency` in flight. */
export async function drive(
  url: string,
  next: () => LoadRequest,
  options: { seconds: number; concurrency: number; rate?: number },
): Promise<{ accepted: Map<string, number>; started: number; ended: number; failed: number }> {
  const agent = new Agent({ connections: options.concurrency });
  const accepted = new Map<string, number>();
  let failed = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const send = async () => {
    const item = next();
    const response = await request(`${url}${item.path}`, {
      dispatcher: agent,
      method: "POST",
      headers: item.headers,
      body: item.body,
    });
    const text = await response.body.text();
    if (response.statusCode === 202) accepted.set((JSON.parse(text) as { id: string }).id, performance.now());
    else failed++;
  };
  if (options.rate === undefined) {
    const worker = async () => {
      while (performance.now() < deadline) await send().catch(() => failed++);
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } else {
    const interval = 1000 / options.rate;
    const inflight: Promise<void>[] = [];
    for (let i = 0; started + i * interval < deadline; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      inflight.push(send().catch(() => void failed++));
    }
    await Promise.all(inflight);
  }
  const ended = performance.now();
  await agent.close();
  return { accepted, started, ended, failed };
}

/** Waits until every destination has every id (bounded); returns the last receipt time. */
export async function awaitReceipts(destinations: Destination[], ids: Iterable<string>, timeoutMs = 120_000) {
  const wanted = [...ids];
  const deadline = Date.now() + timeoutMs;
  for (const d of destinations) {
    while (!wanted.every((id) => d.receipts.has(id))) {
      if (Date.now() > deadline) throw new Error(`${d.id} did not receive every event within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return Math.max(...destinations.flatMap((d) => wanted.map((id) => d.receipts.get(id) as number)));
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) * 10) / 10;
}

/** Runs the fan-out case and returns its figures. */
export async function benchFanout(options: FanoutOptions = {}): Promise<Record<string, number | string>> {
  const seconds = options.durationSeconds ?? 10;
  const concurrency = options.concurrency ?? 32;
  const rate = options.rate ?? 100;
  const runId = randomBytes(4).toString("hex");
  const generator = (secrets: WebhookSecrets, phase: string) => createWebhookGenerator(secrets, `${runId}-${phase}`);

  const ingressOnly = await startBenchGateway({ log: { level: "warn" } });
  let ingressRate: number;
  try {
    const warm = generator(ingressOnly.secrets, "warm-a");
    await drive(ingressOnly.gateway.url, warm, { seconds: 2, concurrency });
    const run = await drive(ingressOnly.gateway.url, generator(ingressOnly.secrets, "ingress"), {
      seconds,
      concurrency,
    });
    ingressRate = Math.round(run.accepted.size / ((run.ended - run.started) / 1000));
  } finally {
    await ingressOnly.cleanup();
  }

  const candidates = [
    await httpReceiver("http-1"),
    await httpReceiver("http-2"),
    await redisReceiver("queue"),
    await smtpReceiver("email"),
  ];
  const destinations = candidates.filter((d): d is Destination => d !== undefined);
  const missing = candidates.length - destinations.length > 0 ? "queue (no redis-server)" : "none";
  const fanout = await startBenchGateway({
    log: { level: "warn" },
    destinations: destinations.map((d) => d.config),
    routes: [{ destinations: destinations.map((d) => d.id) }],
  });
  try {
    const warm = await drive(fanout.gateway.url, generator(fanout.secrets, "warm-b"), { seconds: 2, concurrency: 8 });
    await awaitReceipts(destinations, warm.accepted.keys());

    const paced = await drive(fanout.gateway.url, generator(fanout.secrets, "paced"), { seconds, concurrency, rate });
    await awaitReceipts(destinations, paced.accepted.keys());
    const latencies = (d: Destination) =>
      [...paced.accepted].map(([id, at]) => Math.max(0, (d.receipts.get(id) as number) - at)).sort((a, b) => a - b);
    const all = destinations.flatMap(latencies).sort((a, b) => a - b);

    const loaded = await drive(fanout.gateway.url, generator(fanout.secrets, "loaded"), { seconds, concurrency });
    const last = await awaitReceipts(destinations, loaded.accepted.keys());
    const sustained = Math.round(loaded.accepted.size / ((last - loaded.started) / 1000));
    const perDestination = destinations.map((d) => {
      const done = Math.max(...[...loaded.accepted.keys()].map((id) => d.receipts.get(id) as number));
      return [d.id, Math.round(loaded.accepted.size / ((done - loaded.started) / 1000))] as const;
    });
    const acceptedRate = Math.round(loaded.accepted.size / ((loaded.ended - loaded.started) / 1000));

    console.log(`\nfan-out: ${destinations.map((d) => d.id).join(", ")} (missing: ${missing}); ${seconds} s phases`);
    console.log(`latency at ${rate} events/s, 202 seen by the client -> received by the destination:`);
    for (const d of destinations) {
      const l = latencies(d);
      console.log(`  ${d.id.padEnd(8)} p50 ${percentile(l, 50)} ms   p99 ${percentile(l, 99)} ms`);
    }
    console.log(`  all      p50 ${percentile(all, 50)} ms   p99 ${percentile(all, 99)} ms`);
    console.log(
      `throughput, ${concurrency} in flight: ingress only ${ingressRate} events/s; with fan-out accepted ${acceptedRate} events/s, ` +
        `delivered to all ${destinations.length} ${sustained} events/s (ratio to ingress only ${Math.round((sustained / ingressRate) * 100) / 100})`,
    );
    console.log(`  delivered per destination: ${perDestination.map(([id, eps]) => `${id} ${eps}/s`).join(", ")}`);
    const single = await oneHttpDestination((secrets) => generator(secrets, "single"), seconds, concurrency);
    const singleRatio = Math.round((single.delivered / ingressRate) * 100) / 100;
    console.log(
      `one HTTP destination, ${concurrency} in flight: accepted ${single.accepted} events/s, delivered ${single.delivered} events/s ` +
        `(ratio to ingress only ${singleRatio})   cpu: gateway ${single.cpuPercent}%`,
    );
    checkTarget("fanout", "one HTTP destination, delivered / ingress only", singleRatio, ">=", 0.8);
    checkTarget(
      "fanout",
      `${destinations.length} destinations (${destinations.map((d) => d.id).join(", ")}), delivered to all / ingress only`,
      Math.round((sustained / ingressRate) * 100) / 100,
      ">=",
      0.5,
    );
    return {
      destinations: destinations.map((d) => d.id).join(","),
      missing,
      latency_rate: rate,
      p50_ms: percentile(all, 50),
      p99_ms: percentile(all, 99),
      ...Object.fromEntries(destinations.flatMap((d) => [[`${d.id}_p99_ms`, percentile(latencies(d), 99)]])),
      ingress_only_eps: ingressRate,
      fanout_accepted_eps: acceptedRate,
      fanout_delivered_eps: sustained,
      ...Object.fromEntries(perDestination.map(([id, eps]) => [`${id}_delivered_eps`, eps])),
      ratio_to_ingress: Math.round((sustained / ingressRate) * 100) / 100,
      one_http_accepted_eps: single.accepted,
      one_http_delivered_eps: single.delivered,
      one_http_ratio_to_ingress: singleRatio,
      failed_requests: paced.failed + loaded.failed,
    };
  } finally {
    await fanout.cleanup();
    await Promise.all(destinations.map((d) => d.close()));
  }
}

/**
 * Sustained delivery to a single HTTP destination (the issue's fan-out target): a gateway routing
 * every event to one signed HTTP sink, closed loop for `seconds`, then until the sink has every
 * accepted event; events/s end to end and the gateway's CPU over that time.
 */
async function oneHttpDestination(
  next: (secrets: WebhookSecrets) => () => LoadRequest,
  seconds: number,
  concurrency: number,
): Promise<{ accepted: number; delivered: number; cpuPercent: number }> {
  const sink = await httpReceiver("http-only");
  const gateway = await startBenchGateway({
    log: { level: "warn" },
    destinations: [sink.config],
    routes: [{ destinations: [sink.id] }],
  });
  try {
    const generate = next(gateway.secrets);
    const warm = await drive(gateway.gateway.url, generate, { seconds: 2, concurrency: 8 });
    await awaitReceipts([sink], warm.accepted.keys());
    const { result, cpuPercent } = await withCpu({ gateway: gateway.gateway.child.pid }, async () => {
      const run = await drive(gateway.gateway.url, generate, { seconds, concurrency });
      const last = await awaitReceipts([sink], run.accepted.keys());
      return { run, last };
    });
    const { run, last } = result;
    return {
      accepted: Math.round(run.accepted.size / ((run.ended - run.started) / 1000)),
      delivered: Math.round(run.accepted.size / ((last - run.started) / 1000)),
      cpuPercent: cpuPercent.gateway ?? 0,
    };
  } finally {
    await gateway.cleanup();
    await sink.close();
  }
}
