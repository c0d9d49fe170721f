/**
 * The store conformance suite (test/store/conformance.ts) inside workerd against the Durable
 * Object driver: real SQLite-backed objects, one shard and three shards (merged list, sealed
 * readAfter cursor). Each test gets objects of its own through a fresh name prefix.
 */
import { env } from "cloudflare:workers";
import { createDurableObjectStore } from "../../adapters/cloudflare/durable-object-store.ts";
import { testStoreDriver } from "../conformance/store-conformance.ts";

for (const shards of [1, 3]) {
  testStoreDriver(`durable-object (${shards} shard${shards > 1 ? "s" : ""})`, ({ now, services }) =>
    createDurableObjectStore({ namespace: env.GATEWAY_STORE, shards, prefix: crypto.randomUUID(), now, services }),
  );
}
