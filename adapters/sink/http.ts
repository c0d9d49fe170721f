/**
 * The `http` sink on Node: the core sink (src/delivery/http/http-sink.ts) with `node:crypto`'s
 * HMAC, over the guarded undici transport (http-transport.ts), whose sends run on the process's
 * send thread (http-send-thread.ts) with `GATEWAY_HTTP_SEND_THREAD=on`.
 */
import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { DEFAULT_CONCURRENCY } from "../../src/delivery/delivery-policy.ts";
import type { HttpDestination } from "../../src/delivery/http/http-destination-schema.ts";
import { createHttpSink } from "../../src/delivery/http/http-sink.ts";
import type { SinkFactory } from "../../src/delivery/sink-contract.ts";
import { createThreadedHttpTransport } from "./http-send-thread.ts";
import { createHttpTransport, type HttpTransportOptions } from "./http-transport.ts";

export type { ResolveAll } from "./guarded-lookup.ts";

/** The key object of each secret's bytes (the same array every time: sign-standard-webhook.ts). */
const keyObjects = new WeakMap<Uint8Array, KeyObject>();

/** HMAC-SHA256 of `parts` in base64 with `node:crypto`: no copy of the content, no key import per call. */
export function nodeHmacBase64(key: Uint8Array, parts: readonly (string | Uint8Array)[]): string {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  const hmac = createHmac("sha256", keyObject);
  for (const part of parts) hmac.update(part);
  return hmac.digest("base64");
}

/**
 * `GATEWAY_HTTP_SEND_THREAD`: whether `http` sends run on the send thread (`on`) or in the main
 * thread (`off`, the default, also unset or empty); anything else stops start-up. Off by default:
 * on this project's 2-core machine the thread halved the main thread's CPU per delivery without
 * raising the delivered rate, at up to 19 % more CPU for the process under load, and no machine
 * with a core to spare for it has measured it yet (BENCHMARKS.md "the send off the main thread").
 */
export function sendsOffMainThread(env: Record<string, string | undefined> = process.env): boolean {
  const setting = env.GATEWAY_HTTP_SEND_THREAD;
  if (setting === undefined || setting === "" || setting === "off") return false;
  if (setting === "on") return true;
  throw new Error(`GATEWAY_HTTP_SEND_THREAD: expected on or off, received ${setting}`);
}

/**
 * The `http` sink on Node: the core sink over the guarded undici transport, whose sends run on
 * the process's send thread (http-send-thread.ts) when `sendsOffMainThread()`, else in this
 * thread; `inThread` decides instead when given. An injected resolver (tests: a function does
 * not cross to a thread) keeps the transport in this thread.
 */
export const httpWebhookSink: SinkFactory<
  HttpDestination,
  (Partial<Pick<HttpTransportOptions, "resolve">> & { inThread?: boolean }) | undefined
> = (destination, deps) => {
  const options = {
    policy: { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs },
    connections: destination.concurrency ?? DEFAULT_CONCURRENCY,
  };
  const inThread = deps?.resolve !== undefined || (deps?.inThread ?? !sendsOffMainThread());
  return createHttpSink(destination, {
    transport: inThread
      ? createHttpTransport({ ...options, resolve: deps?.resolve })
      : createThreadedHttpTransport(options),
    // node:crypto's HMAC is synchronous and several times cheaper than Web Crypto's job queue.
    hmac: nodeHmacBase64,
  });
};
