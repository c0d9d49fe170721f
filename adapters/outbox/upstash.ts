/**
 * The `upstash` outbox driver: the shared outbox of the `redis` driver (same Lua scripts) over
 * the Upstash REST client, with the store's URL, token and prefix (docs/several-instances.md).
 */
import type { OutboxFactory } from "../../src/delivery/outbox-contract.ts";
import { createUpstashRunner, resolveUpstashConnection } from "../store/upstash/upstash-runner.ts";
import { createScriptedOutbox } from "./redis/scripted-outbox.ts";

export interface UpstashOutboxOptions {
  /** REST URL. Default: `UPSTASH_REDIS_REST_URL`. */
  url?: string;
  /** REST token. Default: `UPSTASH_REDIS_REST_TOKEN`. */
  token?: string;
  /** The store's key prefix. Default `gw`. */
  prefix?: string;
}

/** The shared outbox on Upstash. */
export const upstashOutbox: OutboxFactory<UpstashOutboxOptions> = (options) =>
  createScriptedOutbox(createUpstashRunner(resolveUpstashConnection(options)), options);
