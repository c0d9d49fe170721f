/**
 * Several real gateway processes on one real redis-server (the `redis` driver) or PostgreSQL
 * server (the `postgres` driver), configured
 * alike: both webhook sources, a live `stream` destination, an optional `http` destination,
 * one route to all of them, a stream client and an admin key. Secrets are shared by all.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { type Responder, startWebhookReceiver, type WebhookReceiver } from "../delivery/helpers/webhook-receiver.ts";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type PostgresServer, type PostgresServerOptions, startPostgresServer } from "../helpers/postgres-server.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

export interface ClusterOptions {
  /** The shared engine: a Redis URL (the `redis` driver) ... */
  redisUrl?: string;
  /** ... or a PostgreSQL URL (the `postgres` driver; the cluster's prefix names its schema). */
  postgresUrl?: string;
  /** Instances to start. */
  count: number;
  /** An `http` destination receiving every event. */
  hookUrl?: string;
  /** Seconds a dead instance's delivery leases last. Default 2. */
  leaseSeconds?: number;
  /** Changes the config before the processes start. */
  edit?: (config: ClusterConfig) => void;
  /** Extra environment of every process (e.g. the Upstash token). */
  env?: Record<string, string>;
  /** Changes one instance's copy of the config (after `edit`), e.g. a destination URL per instance. */
  editInstance?: (config: ClusterConfig, index: number) => void;
}

/** The config the instances share; `destinations` can be edited per test. */
export type ClusterConfig = Record<string, unknown> & { destinations: Record<string, unknown>[] };

export interface Cluster {
  gateways: GatewayProcess[];
  secrets: GatewayProcess["secrets"];
  streamKey: string;
  prefix: string;
  /** Kills every process still running. */
  stop(): Promise<void>;
}

/** Starts `count` instances sharing one Redis key prefix or PostgreSQL schema (fresh per cluster). */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const secrets = makeSecrets();
  const streamKey = `ui_${randomBytes(12).toString("hex")}`;
  const prefix = `c${randomBytes(4).toString("hex")}`;
  const whsec = `whsec_${randomBytes(24).toString("base64")}`;
  const config: ClusterConfig = {
    ...defaultTestConfig("unused", adminKeyHash(secrets.adminKey)),
    store: options.postgresUrl
      ? { driver: "postgres", url: options.postgresUrl, schema: prefix, leaseSeconds: options.leaseSeconds ?? 2 }
      : { driver: "redis", url: options.redisUrl, prefix, leaseSeconds: options.leaseSeconds ?? 2 },
    claimTtlSeconds: 2,
    clients: [{ id: "ui", apiKeyHashes: [adminKeyHash(streamKey)], scopes: { stream: {} } }],
    destinations: [
      { id: "live", type: "stream" },
      ...(options.hookUrl
        ? [
            {
              id: "hook",
              type: "http",
              url: options.hookUrl,
              secrets: ["${TEST_WHSEC}"],
              allowCidrs: ["127.0.0.1/32"],
              concurrency: 8,
              retry: { schedule: [0.2, 0.5, 1, 1, 1, 1, 1, 1], jitter: 0 },
            },
          ]
        : []),
    ],
    routes: [{ destinations: options.hookUrl ? ["live", "hook"] : ["live"] }],
  };
  options.edit?.(config);
  const gateways = await Promise.all(
    Array.from({ length: options.count }, (_, index) => {
      const own = structuredClone(config);
      options.editInstance?.(own, index);
      return startGatewayProcess({ config: own, secrets, env: { TEST_WHSEC: whsec, ...options.env } });
    }),
  );
  return {
    gateways,
    secrets,
    streamKey,
    prefix,
    async stop() {
      await Promise.all(gateways.map((g) => g.kill("SIGTERM")));
    },
  };
}

/** The WebSocket URL of instance `gateway` for the stream key, optionally resuming at `since`. */
/**
 * A `startCluster` edit for the fault tests: the "hook" destination retries every 0.5 s (60
 * times, no jitter) and its breaker never opens, so deliveries keep coming while a fault lasts.
 */
export function hookRetriesThroughFaults(config: ClusterConfig): void {
  const hook = config.destinations.find((d) => d.id === "hook") as Record<string, unknown>;
  hook.retry = { schedule: Array.from({ length: 60 }, () => 0.5), jitter: 0 };
  hook.breaker = { failures: 1000 };
}

export function wsUrlOf(gateway: GatewayProcess, key: string, since?: string): string {
  const params = new URLSearchParams({ token: key });
  if (since) params.set("since", since);
  return `${gateway.url.replace(/^http/, "ws")}/ws?${params}`;
}

/** The shared engines the scale-out suites run against (one `describe.each` per scenario). */
export const ENGINES = ["redis", "postgres"] as const;
export type EngineName = (typeof ENGINES)[number];

/** A running shared engine for one suite. */
export interface Engine {
  name: EngineName;
  /** The cluster options naming it (`redisUrl` or `postgresUrl`). */
  cluster: Pick<ClusterOptions, "redisUrl" | "postgresUrl">;
  /** The store config of a gateway started by hand on it (schema/prefix fresh per call). */
  store(): Record<string, unknown>;
  /** The PostgreSQL server, when `name` is "postgres". */
  postgres?: PostgresServer;
  stop(): Promise<void>;
}

/** Starts a fresh redis-server (AOF, `appendfsync always`) or PostgreSQL server (with `postgres`'s options). */
export async function startEngine(name: EngineName, postgres: PostgresServerOptions = {}): Promise<Engine> {
  const fresh = () => `t${randomBytes(4).toString("hex")}`;
  if (name === "postgres") {
    const server = await startPostgresServer(postgres);
    return {
      name,
      cluster: { postgresUrl: server.url },
      store: () => ({ driver: "postgres", url: server.url, schema: fresh() }),
      postgres: server,
      stop: () => server.stop(),
    };
  }
  const redis = await startDurableRedis();
  return {
    name,
    cluster: { redisUrl: redis.url },
    store: () => ({ driver: "redis", url: redis.url, prefix: fresh() }),
    stop: () => redis.stop(),
  };
}

/** What one engine's run of a scale-out suite works on (filled in before its tests). */
export interface ClusterSuite {
  engine: Engine;
  /** A webhook receiver (a destination's consumer; answers 200 unless `responder` says otherwise). */
  receiver: WebhookReceiver;
  cluster: Cluster;
}

/**
 * In a `describe.each(ENGINES)` block: starts the engine, the receiver and a cluster on the engine
 * (`cluster` names the rest of its options, given the receiver) before the block's tests, and
 * stops them after.
 */
export function useClusterSuite(
  engineName: EngineName,
  options: {
    responder?: Responder;
    cluster: (receiver: WebhookReceiver) => Omit<ClusterOptions, "redisUrl" | "postgresUrl">;
    /** The PostgreSQL server's options (its settings), when the engine is "postgres". */
    postgres?: PostgresServerOptions;
  },
): ClusterSuite {
  const suite: Partial<ClusterSuite> = {};
  beforeAll(async () => {
    const engine = await startEngine(engineName, options.postgres);
    suite.engine = engine;
    const receiver = await startWebhookReceiver(options.responder);
    suite.receiver = receiver;
    suite.cluster = await startCluster({ ...engine.cluster, ...options.cluster(receiver) });
  }, 120_000);
  afterAll(async () => {
    await suite.cluster?.stop();
    await suite.receiver?.close();
    await suite.engine?.stop();
  });
  return suite as ClusterSuite;
}

/**
 * For the tests that stop or crash PostgreSQL under a gateway: one instance on a fresh server
 * (`settings` as `startPostgresServer` takes them), its "hook" destination at a receiver
 * answering `responder` and retrying through the fault (`hookRetriesThroughFaults`). Started
 * before the block's tests, stopped after; `server` is the suite's PostgreSQL server.
 */
export function useGatewayOnPostgres(options: { responder?: Responder; settings?: Record<string, string> }) {
  const suite = useClusterSuite("postgres", {
    responder: options.responder,
    postgres: { settings: options.settings },
    cluster: (receiver) => ({ count: 1, hookUrl: receiver.url, edit: hookRetriesThroughFaults }),
  });
  return {
    get server(): PostgresServer {
      return suite.engine.postgres as PostgresServer;
    },
    get receiver(): WebhookReceiver {
      return suite.receiver;
    },
    get cluster(): Cluster {
      return suite.cluster;
    },
  };
}
