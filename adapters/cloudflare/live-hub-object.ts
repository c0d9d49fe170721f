/**
 * The live stream on Workers: one Durable Object (name `live`) where every `/ws` and `/stream`
 * subscriber of the deployment is attached. It runs the gateway's own live stream (src/stream:
 * scopes, filters, stream tokens, heartbeats, cursor resume from the event log) inside a gateway
 * instance of its own; the Worker forwards those paths here and publishes every recorded event
 * to it (`publish`). WebSockets use the Hibernation API (hibernatable-websocket.ts: tags,
 * attachments, auto-response, sessions rebuilt from their cursor after an eviction); `/stream`
 * (SSE) is served by the gateway's h3 app from this object.
 * docs/cloudflare-workers.md gives the limits and the sharding plan.
 */
import { DurableObject } from "cloudflare:workers";
import { serve } from "h3/cloudflare";
import { createGateway, type Gateway } from "../../src/create-gateway.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { inProcessHub } from "../hub/in-process.ts";
import type { DurableObjectState, HibernatableWebSocket } from "./cloudflare-types.ts";
import { createHibernatableWebSockets } from "./hibernatable-websocket.ts";
import { loadQuickJSWorker } from "./quickjs-worker.ts";
import { createWorkerConfig } from "./worker-config.ts";
import { type LiveHubObjectRpc, openWorkerStore, type WorkerEnv, workerTransformExecutor } from "./worker-env.ts";
import { createWorkerTracing } from "./worker-tracing.ts";

type Server = ReturnType<typeof serve>;

export class LiveHubObject extends DurableObject<WorkerEnv> implements LiveHubObjectRpc {
  private gateway: Gateway | undefined;
  private server: Server | undefined;
  private readonly sockets: ReturnType<typeof createHibernatableWebSockets>;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sockets = createHibernatableWebSockets(ctx, () => {
      const { gateway } = this.open();
      return { ctx: gateway.ctx, live: gateway.live };
    });
  }

  private open(): { gateway: Gateway; server: Server } {
    if (!this.gateway || !this.server) {
      const config = createWorkerConfig(this.env);
      this.gateway = createGateway({
        config,
        store: openWorkerStore(this.env),
        hub: inProcessHub(undefined),
        tracing: createWorkerTracing(this.env),
        loadQuickJS: loadQuickJSWorker,
        transformExecutor: workerTransformExecutor(this.env, config.transforms.deadlineSlackMs),
      });
      this.server = serve(this.gateway.app, { manual: true });
    }
    return { gateway: this.gateway, server: this.server };
  }

  /** `/ws` upgrades and `/stream` requests forwarded by the Worker. */
  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/ws" && request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      return this.sockets.upgrade(request);
    }
    const context = { waitUntil: (p: Promise<unknown>) => this.ctx.waitUntil(p), passThroughOnException() {} };
    return this.open().server.fetch(request, {}, context);
  }

  /** An event was recorded: offer it to every attached subscriber (rebuilt first after a wake). */
  async publish(record: EventRecord): Promise<void> {
    await this.sockets.restore();
    this.open().gateway.ctx.hub.publish(record);
  }

  /** Open WebSockets, all or of one client (tags). */
  async openSockets(clientId?: string): Promise<number> {
    return this.ctx.getWebSockets(clientId === undefined ? undefined : `client:${clientId}`).length;
  }

  async webSocketMessage(ws: HibernatableWebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.sockets.message(ws, message);
  }

  async webSocketClose(ws: HibernatableWebSocket): Promise<void> {
    this.sockets.close(ws);
  }

  async webSocketError(ws: HibernatableWebSocket): Promise<void> {
    this.sockets.close(ws);
  }
}
