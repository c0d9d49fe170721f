/**
 * `Idempotency-Key` replay, as both references document it: the first answer to a key is kept for
 * 24 hours; the same key with the same body returns it again with `Idempotent-Replayed: true`,
 * the same key with a different body is a conflict. Keys are scoped per caller and bounded.
 */
import { createBoundedMap } from "./bounded-map.ts";
import { sha256Hex } from "./hmac.ts";

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

interface Kept {
  bodyHash: string;
  storedAt: number;
  status: number;
  body: unknown;
}

export type IdempotencyLookup =
  | { kind: "new"; remember(status: number, body: unknown): void }
  | { kind: "replay"; status: number; body: unknown }
  | { kind: "conflict" };

/** A replay cache on the emulator's clock. */
export function createIdempotencyCache(now: () => number, max = 10_000) {
  const kept = createBoundedMap<string, Kept>(max);
  return {
    /** Looks up `key` of `scope` for a request whose raw body is `body`. */
    async lookup(scope: string, key: string, body: Uint8Array): Promise<IdempotencyLookup> {
      const id = `${scope}\n${key}`;
      const bodyHash = await sha256Hex(body);
      const earlier = kept.get(id);
      if (earlier && now() - earlier.storedAt < IDEMPOTENCY_TTL_MS) {
        if (earlier.bodyHash !== bodyHash) return { kind: "conflict" };
        return { kind: "replay", status: earlier.status, body: earlier.body };
      }
      return {
        kind: "new",
        remember(status, answer) {
          kept.delete(id);
          kept.set(id, { bodyHash, storedAt: now(), status, body: answer });
        },
      };
    },
  };
}
