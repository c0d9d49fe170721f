/**
 * CPU per delivery of one destination lane with everything an attempt costs on the main thread
 * but the ingress: the lane's schedule, the attempt (event read, the `http` sink's signed request
 * through the guarded undici transport to a loopback destination in its own process), the attempt
 * record and outcome (retry schedule), the "delivering" and outcome writes through the engine's
 * retrying, per-turn batched persist into the memory outbox, metrics and the work tracker.
 * Alternating rounds between checkouts loaded in this one process (a loaded machine's drift
 * falls on every build alike).
 *
 *   node --import tsx bench/lib/lane-cpu.ts [<name>=<checkout dir> ...]   (default: this checkout)
 *
 * `BENCH_DELIVERIES` per round (default 20,000), `BENCH_ROUNDS` (default 5), `BENCH_SEND_THREAD=on|off`
 * (the send thread, whatever the cores; a checkout older than it ignores this). The lane is fed as
 * the route dispatcher feeds it: a new record each time one is delivered, 64 waiting. Prints the
 * main thread's CPU per delivery (/proc, 10 ms ticks) and the process's (every thread: the `http`
 * sink's send thread included).
 */
import { pathToFileURL } from "node:url";
import type { EventRecord } from "../../src/store/contract.ts";
import { receiver } from "../cases/latency.ts";
import { checkoutsOf, esignEventRecord, median, sendThreadChoice } from "./checkout-ab.ts";
import { mainThreadCpuSecondsOf } from "./cpu-meter.ts";

const deliveries = Number(process.env.BENCH_DELIVERIES) || 20_000;
const rounds = Number(process.env.BENCH_ROUNDS) || 5;
const WAITING = 64;
const sinkDeps = sendThreadChoice();
const checkouts = checkoutsOf(process.argv.slice(2));

/** A recorded e-sign event as the router hands it to a lane. */
const eventRecord = (n: number): EventRecord =>
  esignEventRecord(n, `lane-cpu-${n}`, {
    subject: `agreements/${n}`,
    headers: { "content-type": "application/json" },
  });

const destination = await receiver();
const events = new Map<string, EventRecord>();
for (let n = 0; n < 2000; n++) {
  const record = eventRecord(n);
  events.set(record.id, record);
}
const eventIds = [...events.keys()];
// The store's recent events in memory: what the lane reads per attempt.
const store = { get: async (id: string) => events.get(id) };

const import_ = (dir: string, path: string) => import(pathToFileURL(`${dir}/${path}`).href);

type Lane = { add(record: unknown): void; idle(): Promise<void> };

const builds = await Promise.all(
  checkouts.map(async ({ name, dir }) => {
    const { httpWebhookSink } = await import_(dir, "adapters/sink/http.ts");
    const { memoryOutbox } = await import_(dir, "adapters/outbox/memory.ts");
    const { createDestinationLane } = await import_(dir, "src/delivery/destination-lane.ts");
    const { createRetryingPersist } = await import_(dir, "src/delivery/outbox-write-retry.ts");
    const { createWorkTracker } = await import_(dir, "src/delivery/work-tracker.ts");
    const { resolveDeliveryPolicy } = await import_(dir, "src/delivery/delivery-policy.ts");
    const { systemScheduler } = await import_(dir, "src/delivery/scheduler.ts");
    const { createMetrics } = await import_(dir, "src/ops/metrics.ts");
    const { DELIVERY_METRICS } = await import_(dir, "src/delivery/delivery-metrics.ts");
    const { createLogger } = await import_(dir, "src/ops/logger.ts");
    const config = { ...destination.config, mode: "cloudevent", timeoutSeconds: 15, allowPrivateNetworks: false };
    const logger = createLogger("warn", () => {});
    const outbox = memoryOutbox();
    const writes = createRetryingPersist({
      outbox,
      scheduler: systemScheduler,
      logger,
      now: Date.now,
      afterTurn: setImmediate,
    });
    const tracker = createWorkTracker(() => {});
    let onDelivered: () => void = () => {};
    const lane: Lane = createDestinationLane(config.id, {
      sink: httpWebhookSink(config, sinkDeps),
      policy: resolveDeliveryPolicy(config),
      store,
      clock: { now: Date.now },
      scheduler: systemScheduler,
      random: Math.random,
      metrics: createMetrics(DELIVERY_METRICS),
      logger,
      persist: (records: unknown[]) => writes.persist(records),
      persistDestination: (state: unknown) => outbox.saveDestinationState(state),
      track: (work: Promise<unknown>) => tracker.track(work),
      observe: (observation: { kind: string; ok?: boolean }) => {
        if (observation.kind === "attempt") onDelivered();
      },
    });
    return {
      name,
      lane,
      outbox,
      setOnDelivered: (callback: () => void) => {
        onDelivered = callback;
      },
    };
  }),
);

let seq = 0;
/** A new pending delivery of one of the events (each delivery its own key). */
function delivery(now: number) {
  const eventId = eventIds[seq % eventIds.length] as string;
  seq++;
  return {
    eventId,
    destinationId: "http-1",
    seq,
    subject: undefined,
    receivedAt: now,
    createdAt: now,
    updatedAt: now,
    state: "pending",
    nextAttemptAt: now,
    failures: 0,
    attempts: [],
  };
}

async function round(build: (typeof builds)[number]) {
  // Each round delivers each event at most once per lane at a time: the lane keys by event id.
  let added = 0;
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const feed = () => {
    if (added >= deliveries) return;
    added++;
    build.lane.add(delivery(Date.now()));
  };
  build.setOnDelivered(() => {
    done++;
    if (done === deliveries) finished();
    else feed();
  });
  const cpu = process.cpuUsage();
  const main = await mainThreadCpuSecondsOf(process.pid);
  const started = performance.now();
  for (let i = 0; i < WAITING; i++) feed();
  await all;
  await build.lane.idle();
  const used = process.cpuUsage(cpu);
  return {
    us: (((await mainThreadCpuSecondsOf(process.pid)) - main) * 1e6) / deliveries,
    processUs: (used.user + used.system) / deliveries,
    perSecond: Math.round(deliveries / ((performance.now() - started) / 1000)),
  };
}

const results = new Map<string, number[]>();
for (const build of builds) await round(build); // warm-up
for (let r = 1; r <= rounds; r++) {
  for (const build of builds) {
    const figures = await round(build);
    results.set(build.name, [...(results.get(build.name) ?? []), figures.us]);
    console.log(
      `round ${r} ${build.name.padEnd(8)} main thread ${figures.us.toFixed(1)} µs CPU per delivery (process ${figures.processUs.toFixed(1)})   ${figures.perSecond} deliveries/s`,
    );
  }
}
for (const [name, values] of results) {
  console.log(`${name.padEnd(8)} median ${median(values).toFixed(1)} µs of main thread per delivery`);
}
await destination.close();
process.exit(0);
