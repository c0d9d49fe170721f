/**
 * The live stream on Workers: one Durable Object (name `live`) where every `/ws` and `/stream`
 * subscriber of the deployment is attached. It runs the gateway's own live stream
 * (src/stream: scopes, filters, stream tokens, heartbeats, slow-consumer bounds, cursor resume
 * from the journal) inside a gateway instance of its own, served through h3's Workers adapter
 * with crossws's Cloudflare plugin; the Worker forwards those paths here and publishes every
 * recorded event to it (`publish`). Resume after a reconnect reads the Durable Object journal.
 *
 * Sockets are accepted in the object (crossws's Cloudflare path without hibernation): sessions
 * hold their state in memory, so the object stays resident while subscribers are connected.
 * README "Deploy to Cloudflare Workers" gives the limits and the sharding plan.
 */
import { DurableObject } from "cloudflare:workers";
import { plugin as ws } from "crossws/server";
import { serve } from "h3/cloudflare";
import { createGateway, type Gateway } from "../../src/create-gateway.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { createWorkerConfig } from "./worker-config.ts";
import { openWorkerStore, type WorkerEnv } from "./worker-env.ts";

type Server = ReturnType<typeof serve>;

export class LiveHubObject extends DurableObject<WorkerEnv> {
  private gateway: Gateway | undefined;
  private server: Server | undefined;

  private open(): { gateway: Gateway; server: Server } {
    if (!this.gateway || !this.server) {
      this.gateway = createGateway({ config: createWorkerConfig(this.env), store: openWorkerStore(this.env) });
      this.server = serve(this.gateway.app, { manual: true, plugins: [ws({})] });
    }
    return { gateway: this.gateway, server: this.server };
  }

  /** `/ws` upgrades and `/stream` requests forwarded by the Worker. */
  async fetch(request: Request): Promise<Response> {
    const context = { waitUntil: (p: Promise<unknown>) => this.ctx.waitUntil(p), passThroughOnException() {} };
    // No `$DurableObject` binding in this env: crossws accepts the socket right here.
    return this.open().server.fetch(request, {}, context);
  }

  /** An event was recorded: offer it to every attached subscriber. */
  async publish(record: EventRecord): Promise<void> {
    this.open().gateway.ctx.hub.publish(record);
  }

  /** Subscribers attached now (tests, operators). */
  async size(): Promise<number> {
    return this.open().gateway.live.size;
  }
}
