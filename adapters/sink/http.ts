/**
 * The `http` sink on Node: the core sink (src/delivery/http/http-sink.ts) with `node:crypto`'s
 * HMAC, over the guarded undici transport (http-transport.ts) whose sends run on the process's
 * send thread (http-send-thread.ts).
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
 * The `http` sink on Node: the core sink over the guarded undici transport, whose sends run on
 * the process's send thread (http-send-thread.ts); in this thread instead when `inThread` is set
 * or a resolver is injected (tests: a function does not cross to a thread).
 */
export const httpWebhookSink: SinkFactory<
  HttpDestination,
  (Partial<Pick<HttpTransportOptions, "resolve">> & { inThread?: boolean }) | undefined
> = (destination, deps) => {
  const options = {
    policy: { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs },
    connections: destination.concurrency ?? DEFAULT_CONCURRENCY,
  };
  return createHttpSink(destination, {
    transport:
      deps?.resolve || deps?.inThread
        ? createHttpTransport({ ...options, resolve: deps.resolve })
        : createThreadedHttpTransport(options),
    // node:crypto's HMAC is synchronous and several times cheaper than Web Crypto's job queue.
    hmac: nodeHmacBase64,
  });
};
