/**
 * The delivery engine on Workers: one SQLite-backed Durable Object (name `delivery`) running the
 * same engine as Node (src/delivery/delivery-engine.ts) inside a gateway instance of its own,
 * with the outbox on its storage (durable-object-outbox.ts), sinks over `fetch`, Cloudflare
 * Queues and the HTTP mail API (create-worker-sinks.ts), and an alarm-backed scheduler
 * (alarm-scheduler.ts). The Worker forwards the delivery admin API here and wakes the engine
 * after every recorded event (`wake`); the alarm wakes it for retries and as a slow poll of the
 * event log, so an evicted or restarted object resumes from its outbox and routing cursor.
 */
import { DurableObject } from "cloudflare:workers";
import { createGateway, type Gateway } from "../../src/create-gateway.ts";
import type { DeliveriesErased } from "../../src/delivery/delivery-engine.ts";
import { createLogger } from "../../src/ops/logger.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { inProcessHub } from "../hub/in-process.ts";
import { type AlarmScheduler, createAlarmScheduler } from "./alarm-scheduler.ts";
import type { DurableObjectState } from "./cloudflare-types.ts";
import { createWorkerSinks } from "./create-worker-sinks.ts";
import { createDurableObjectOutbox } from "./durable-object-outbox.ts";
import { loadQuickJSWorker } from "./quickjs-worker.ts";
import { createWorkerConfig } from "./worker-config.ts";
import { type DeliveryObjectRpc, openWorkerStore, type WorkerEnv, workerTransformExecutor } from "./worker-env.ts";
import { createWorkerTracing } from "./worker-tracing.ts";
import { workerUpstreamFetch } from "./worker-upstream-fetch.ts";

/** Event log poll period behind `wake`: the alarm re-arms at most this often when idle. */
const POLL_INTERVAL_MS = 30_000;

export class DeliveryObject extends DurableObject<WorkerEnv> implements DeliveryObjectRpc {
  private readonly scheduler: AlarmScheduler;
  private ready: Promise<Gateway> | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.scheduler = createAlarmScheduler(ctx.storage);
  }

  /** The gateway with its engine started (once per object lifetime; retried after a failure). */
  private gateway(): Promise<Gateway> {
    this.ready ??= (async () => {
      const config = createWorkerConfig(this.env);
      const logger = createLogger(config.log.level);
      const gateway = createGateway({
        config,
        logger,
        store: openWorkerStore(this.env),
        hub: inProcessHub(undefined),
        tracing: createWorkerTracing(this.env),
        // Enrichment calls upstreams from here.
        upstreamFetch: workerUpstreamFetch,
        loadQuickJS: loadQuickJSWorker,
        transformExecutor: workerTransformExecutor(this.env, config.transforms.deadlineSlackMs),
        delivery: {
          outbox: createDurableObjectOutbox(this.ctx.storage),
          sinks: createWorkerSinks(config.destinations, this.env as unknown as Record<string, unknown>, logger),
          scheduler: this.scheduler,
          pollIntervalMs: POLL_INTERVAL_MS,
        },
      });
      await gateway.start();
      return gateway;
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** The delivery admin API (the Worker forwards `/destinations/**` and event replays). */
  async fetch(request: Request): Promise<Response> {
    return (await this.gateway()).fetch(request);
  }

  /** An event was recorded: route it now (the event log poll would find it later anyway). */
  async wake(record: EventRecord): Promise<void> {
    const gateway = await this.gateway();
    gateway.ctx.hub.publish(record);
    this.flushTracesWhenSettled(gateway);
  }

  /**
   * Erasure's share of the outbox (src/lifecycle/erase-events.ts, called by the Worker's
   * gateway): the deliveries of these events are cancelled and lose the texts that may quote them.
   */
  async eraseDeliveries(eventIds: string[]): Promise<DeliveriesErased> {
    const gateway = await this.gateway();
    return (await gateway.ctx.eraseDeliveries?.(eventIds)) ?? { cancelled: 0, texts: [] };
  }

  /** Retention of the outbox: final records older than `retentionDays` go; returns the count. */
  async maintain(): Promise<number> {
    const gateway = await this.gateway();
    return (await gateway.ctx.delivery?.purge(Date.now() - gateway.ctx.config.retentionDays * 86_400_000)) ?? 0;
  }

  /** The alarm: start the engine if the object was evicted, then run the timers that are due. */
  async alarm(): Promise<void> {
    const gateway = await this.gateway();
    this.scheduler.runDue(Date.now());
    this.flushTracesWhenSettled(gateway);
  }

  /** With tracing on: exports the spans of the work just started (routing, attempts) once it is done. */
  private flushTracesWhenSettled(gateway: Gateway): void {
    const { tracing, delivery } = gateway.ctx;
    if (!tracing || !delivery) return;
    this.ctx.waitUntil(delivery.settled().then(() => tracing.flush()));
  }
}
