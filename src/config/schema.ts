/**
 * The gateway's configuration schema (valibot). Values live in `config/`; secrets come from the
 * environment through `${VAR}` references resolved by `resolveConfig` before validation.
 * Every field documents its default; docs/configuration.md#fields mirrors this file.
 */
import * as v from "valibot";
import { EmailDestinationSchema } from "../delivery/email/email-destination-schema.ts";
import { HttpEmailDestinationSchema } from "../delivery/email/http-email-destination-schema.ts";
import { HttpDestinationSchema } from "../delivery/http/http-destination-schema.ts";
import { CloudflareQueueDestinationSchema } from "../delivery/queue/cloudflare-queue-destination-schema.ts";
import { QueueDestinationSchema } from "../delivery/queue/queue-destination-schema.ts";
import { RetentionRulesSchema } from "../lifecycle/retention-schema.ts";
import { OperationalEventsSchema } from "../operational-events/operational-events-schema.ts";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import { TransformEntries, TransformsSettingsSchema } from "../transform/transform-schema.ts";
import { AuthSchema, ClientSchema } from "./clients-schema.ts";
import { IngressProtectionSchema, MetricsAccessSchema, ServerLimitsEntries } from "./hardening-schema.ts";
import { createRouteSchema, StreamDestinationSchema } from "./routes-schema.ts";
import { servicePicklist } from "./service-picklist.ts";
import {
  defaultHubDriver,
  hubStoreMismatch,
  SharedHubConfigSchemas,
  SharedStoreConfigSchemas,
} from "./shared-store-schema.ts";
import { createUpstreamsSchema } from "./upstreams-schema.ts";

const id = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or - (max 63)"),
);

const secret = v.pipe(v.string(), v.minLength(16, "a secret of at least 16 characters"));

/** SHA-256 of an API key, hex: `sha256:<64 hex>`. Generate with `gateway hash-key <key>`. */
const keyHash = v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, "`sha256:` followed by 64 lower-case hex digits"));

const sourceEntries = {
  /** Active signing secrets; any one verifies (rotation). */
  secrets: v.pipe(v.array(secret), v.minLength(1, "at least one secret"), v.maxLength(8)),
  /** staffing: accepted |now - t| in seconds. Default 300. */
  toleranceSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 300),
  /** How long an upstream identity is remembered for dedupe, seconds. Default 72 h. */
  dedupeWindowSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60)), 72 * 3600),
  /** Largest accepted body in bytes. Default 1 MiB. */
  bodyLimitBytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(64 * 1024 * 1024)),
    1024 * 1024,
  ),
  /** staffing: `delivery-id` (X-Svc-Delivery-Id, body hash when absent) or `body-sha256`. */
  identity: v.optional(v.picklist(["delivery-id", "body-sha256"]), "delivery-id"),
  /** Time allowed to receive the whole body once the handler starts reading it, ms. Default 30 s. */
  bodyTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(600_000)), 30_000),
};

/** A source's schema, its `service` one of the registry's names. */
export function createSourceSchema(services: ServiceRegistry) {
  return v.strictObject({
    /** Path segment of `POST /webhooks/{id}`. */
    id,
    /** Which upstream signs and shapes the webhooks of this source (a name in src/services/registry.ts). */
    service: servicePicklist(services),
    ...sourceEntries,
  });
}

export const SourceSchema = createSourceSchema(builtinServices);

/** Directory of the sqlite store's database. Default `.data`. */
const storeDir = v.optional(v.pipe(v.string(), v.minLength(1)), ".data");

export const StoreConfigSchema = v.variant("driver", [
  v.strictObject({ driver: v.literal("memory") }),
  /** The earlier name of the sqlite driver, kept so existing configurations keep working. */
  v.strictObject({ driver: v.literal("disk"), dir: storeDir }),
  /** The embedded SQLite store, the default (docs/storage.md#the-sqlite-store). */
  v.strictObject({ driver: v.literal("sqlite"), dir: storeDir }),
  ...SharedStoreConfigSchemas,
]);

/**
 * The live hub driver (adapters/hub/registry.ts). Default: the store's own hub for a shared store
 * (`redis`, `upstash`), else `in-process`.
 */
export const HubConfigSchema = v.variant("driver", [
  v.strictObject({ driver: v.literal("in-process") }),
  ...SharedHubConfigSchemas,
]);

/**
 * Destination variants by `type`. Each destination module adds its schema here
 * (`http`, `queue`, `email` in src/delivery; `stream` in src/stream).
 */
export const DestinationSchema = v.variant("type", [
  transformable(StreamDestinationSchema),
  transformable(HttpDestinationSchema),
  // `driver` picks the queue backend: Redis Streams (default) or Cloudflare Queues (Workers).
  v.variant("driver", [transformable(QueueDestinationSchema), transformable(CloudflareQueueDestinationSchema)]),
  // `transport` picks how mail leaves: SMTP (default, Node) or an HTTP mail API (Node and Workers).
  v.variant("transport", [transformable(EmailDestinationSchema), transformable(HttpEmailDestinationSchema)]),
]);

/** A delivered destination's schema plus its optional `transform` (src/transform, docs/transformations.md). */
function transformable<const Entries extends v.ObjectEntries>(schema: v.StrictObjectSchema<Entries, undefined>) {
  return v.strictObject({ ...schema.entries, ...TransformEntries });
}

/** The configuration's schema for a registry of upstream services. */
export function createGatewayConfigSchema(services: ServiceRegistry) {
  return v.pipe(gatewayConfigObject(services), v.rawCheck(checkCrossReferences), v.transform(withDefaultHub));
}

/** The config with `hub` filled in: the store's own hub when the store is shared, else the memory hub (`in-process`). */
function withDefaultHub<T extends { store: { driver: string }; hub?: HubConfig }>(config: T): T & { hub: HubConfig } {
  return { ...config, hub: config.hub ?? ({ driver: defaultHubDriver(config.store.driver) } as HubConfig) };
}

const gatewayConfigObject = (services: ServiceRegistry) =>
  v.strictObject({
    server: v.optional(
      v.strictObject({
        /** Default 127.0.0.1. */
        host: v.optional(v.string(), "127.0.0.1"),
        /** Default 8787; 0 picks a free port. */
        port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65_535)), 8787),
        ...ServerLimitsEntries,
      }),
      {},
    ),
    store: v.optional(StoreConfigSchema, { driver: "sqlite" }),
    /** How the ingress announces recorded events to the engine and the live stream. Default: see `HubConfigSchema`. */
    hub: v.optional(HubConfigSchema),
    /** Source ids are unique (checked below, so the error names the duplicate's path). */
    sources: v.array(createSourceSchema(services)),
    admin: v.optional(
      v.strictObject({
        /** Hashes of the API keys allowed to read the event log and metrics. */
        apiKeyHashes: v.optional(v.array(keyHash), []),
      }),
      {},
    ),
    /** Where events can go. */
    destinations: v.optional(v.array(DestinationSchema), []),
    /** Which events go to which destinations. */
    routes: v.optional(v.array(createRouteSchema(services)), []),
    /** Callers of the proxy, live stream and admin API. */
    clients: v.optional(
      v.pipe(
        v.array(ClientSchema),
        v.check((clients) => new Set(clients.map((c) => c.id)).size === clients.length, "client ids must be unique"),
      ),
      [],
    ),
    /** How client JWTs are verified. */
    auth: v.optional(AuthSchema, {}),
    /** APIs proxied at `/api/{upstreamId}/...` (see upstreams-schema.ts). Default none. */
    upstreams: v.optional(createUpstreamsSchema(services), []),
    /** Defences of `POST /webhooks/*` (see hardening-schema.ts). */
    ingress: v.optional(IngressProtectionSchema, {}),
    /** Who may read `/metrics` and the details of `/healthz` (see hardening-schema.ts). */
    metrics: v.optional(MetricsAccessSchema, {}),
    /** Days an event stays in the log. Default 30. */
    retentionDays: v.optional(v.pipe(v.number(), v.minValue(0.001), v.maxValue(3650)), 30),
    /** The gateway's own `gateway.*` events and their thresholds (docs/data-lifecycle.md). */
    operationalEvents: v.optional(OperationalEventsSchema, {}),
    /** Retention per source and type; the most specific rule wins (src/lifecycle/retention-rules.ts). Default none. */
    retention: v.optional(RetentionRulesSchema, []),
    /** Seconds an "in progress" claim lives before a retry may take over. Default 30. */
    claimTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600)), 30),
    /** Enables `POST /sources/{id}/test-events` (signed samples, docs/console.md#test-events). Default false; on in the zero-config development setup. */
    testEvents: v.optional(v.boolean(), false),
    /** Where and how transforms run (worker pool, deadline slack, console lines); docs/transformations.md. */
    transforms: v.optional(TransformsSettingsSchema, {}),
    log: v.optional(
      v.strictObject({
        /** `debug`, `info` (default), `warn`, `error` or `silent`. */
        level: v.optional(v.picklist(["debug", "info", "warn", "error", "silent"]), "info"),
      }),
      {},
    ),
  });

/** The whole configuration for the built-in services, with the cross-references checked. */
export const GatewayConfigSchema = createGatewayConfigSchema(builtinServices);

type ConfigObjectOutput = v.InferOutput<ReturnType<typeof gatewayConfigObject>>;

/**
 * Unique source and destination ids; routes name configured destinations. Also run when other
 * fields have problems (on the entries that have a string id), so a check lists every problem
 * at once (`gateway validate`).
 */
function checkCrossReferences({ dataset, addIssue }: v.RawCheckContext<ConfigObjectOutput>): void {
  const value = dataset.value as Partial<ConfigObjectOutput> | undefined;
  if (!value || typeof value !== "object") return;
  const list = <T>(items: T[] | undefined): T[] => (Array.isArray(items) ? items : []);
  const idOf = (item: unknown) => (item as { id?: unknown } | null)?.id;
  if (dataset.typed) {
    const { hub, store } = dataset.value;
    const hubProblem = hub && hubStoreMismatch(hub.driver, store.driver);
    if (hubProblem) addIssue({ message: hubProblem, path: pathOf(value, ["hub", "driver"]) });
    // One body within its source's limit must always fit the budget of bodies in flight.
    const budget = dataset.value.ingress.maxBodyBytesInFlight;
    const largest = dataset.value.sources.reduce(
      (most: SourceConfig | undefined, s) => (s.bodyLimitBytes > (most?.bodyLimitBytes ?? 0) ? s : most),
      undefined,
    );
    if (largest && largest.bodyLimitBytes > budget) {
      addIssue({
        message: `at least every source's bodyLimitBytes (source "${largest.id}" takes bodies of up to ${largest.bodyLimitBytes} bytes; received ${budget})`,
        path: pathOf(value, ["ingress", "maxBodyBytesInFlight"]),
      });
    }
  }
  const sourceIds = new Set<string>();
  list(value.sources).forEach((s, i) => {
    const id = idOf(s);
    if (typeof id !== "string") return;
    if (sourceIds.has(id)) {
      addIssue({ message: `a unique source id (duplicate "${id}")`, path: pathOf(value, ["sources", i, "id"]) });
    }
    sourceIds.add(id);
  });
  const ids = new Set<string>();
  list(value.destinations).forEach((d, i) => {
    if (d && "mode" in d && d.mode === "relay" && "transform" in d && d.transform) {
      addIssue({
        message: "no transform in relay mode (relay forwards the upstream's body unchanged; use mode cloudevent)",
        path: pathOf(value, ["destinations", i, "transform"]),
      });
    }
    const id = idOf(d);
    if (typeof id !== "string") return;
    if (ids.has(id))
      addIssue({
        message: `a unique destination id (duplicate "${id}")`,
        path: pathOf(value, ["destinations", i, "id"]),
      });
    ids.add(id);
  });
  list(value.routes).forEach((route, r) => {
    list(route?.destinations).forEach((destination, i) => {
      if (typeof destination === "string" && !ids.has(destination)) {
        addIssue({
          message: `the id of a configured destination (no destination "${destination}")`,
          path: pathOf(value, ["routes", r, "destinations", i]),
        });
      }
    });
  });
}

/** Builds a valibot issue path for `addIssue` from keys. */
function pathOf(root: unknown, keys: (string | number)[]): [v.IssuePathItem, ...v.IssuePathItem[]] {
  const items: v.IssuePathItem[] = [];
  let input: unknown = root;
  for (const key of keys) {
    const value = (input as Record<string | number, unknown>)[key];
    items.push({
      type: "object",
      origin: "value",
      input: input as Record<string, unknown>,
      key: String(key),
      value,
    } as v.IssuePathItem);
    input = value;
  }
  return items as [v.IssuePathItem, ...v.IssuePathItem[]];
}

/** What a config file holds (defaults optional). */
export type GatewayConfigInput = v.InferInput<typeof GatewayConfigSchema>;
/** The validated configuration with defaults applied. */
export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
export type SourceConfig = v.InferOutput<typeof SourceSchema>;
export type StoreConfig = v.InferOutput<typeof StoreConfigSchema>;
export type HubConfig = v.InferOutput<typeof HubConfigSchema>;
export type DestinationConfig = v.InferOutput<typeof DestinationSchema>;

/** Identity helper for typed `.ts` config files. */
export function defineConfig(config: GatewayConfigInput): GatewayConfigInput {
  return config;
}
