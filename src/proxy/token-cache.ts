/**
 * The shared access-token cache of one OAuth upstream. The token lives in the store (kv), so
 * every instance sharing the store uses one token; a refresh happens under a short
 * `kvSetIfAbsent` lock, so N concurrent callers on M instances cause one token request.
 * In-process callers share one in-flight refresh; other instances poll the store (bounded)
 * until the lock holder has written its result. A failed refresh is remembered briefly, so
 * waiters and new callers fail fast instead of hammering the token endpoint (10/min per IP).
 */
import * as v from "valibot";
import type { StoreDriver } from "../store/contract.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import { type IssuedToken, type TokenFailureReason, TokenFetchError } from "./fetch-access-token.ts";
import { sleep } from "./upstream-fetch.ts";

export interface TokenCacheOptions {
  /** Store key of the token; the lock and failure marks use it as a prefix. */
  key: string;
  store: StoreDriver;
  now: () => number;
  /** Requests a new token from the token endpoint (traced as a child of `span`, when given). */
  fetchToken: (span?: TraceSpan) => Promise<IssuedToken>;
  /** How long a refresh may hold the lock before another instance takes over. */
  lockTtlMs: number;
}

export interface TokenCache {
  /** A token valid now; never `rejected` (a token the upstream just refused). `span`: the caller's, when traced. */
  get(rejected?: string, span?: TraceSpan): Promise<string>;
  /** Forgets `token` locally and in the store, unless another caller already replaced it. */
  invalidate(token: string): Promise<void>;
}

const StoredTokenSchema = v.object({ value: v.string(), refreshAt: v.number(), expiresAt: v.number() });
const StoredFailureSchema = v.object({
  reason: v.picklist(["rejected", "rate_limited", "unavailable", "timeout", "invalid_response"]),
  status: v.optional(v.number()),
  until: v.number(),
});

/** How long a failed refresh is remembered (6 s keeps one instance under 10 token requests a minute). */
const FAILURE_HOLD_MS = 6_000;
const POLL_START_MS = 10;
const POLL_MAX_MS = 200;

function parseStored<T>(schema: v.GenericSchema<unknown, T>, raw: string | undefined): T | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = v.safeParse(schema, JSON.parse(raw));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/** Creates the cache of one upstream. */
export function createTokenCache(options: TokenCacheOptions): TokenCache {
  const { key, store, now } = options;
  const lockKey = `${key}:lock`;
  const failureKey = `${key}:failure`;
  const owner = crypto.randomUUID();
  let local: IssuedToken | undefined;
  let inflight: { rejected?: string; promise: Promise<string> } | undefined;

  const usable = (token: IssuedToken | undefined, rejected?: string): token is IssuedToken =>
    token !== undefined && token.value !== rejected && now() < token.refreshAt;

  const failFast = async () => {
    const failure = parseStored(StoredFailureSchema, await store.kvGet(failureKey));
    if (failure && failure.until > now()) {
      const reason: TokenFailureReason = failure.reason;
      throw new TokenFetchError(reason, failure.status, failure.until - now());
    }
  };

  const refreshAsHolder = async (rejected?: string, span?: TraceSpan): Promise<string> => {
    try {
      // Another instance may have stored a token between our read and our lock.
      const fresh = parseStored(StoredTokenSchema, await store.kvGet(key));
      if (usable(fresh, rejected)) {
        local = fresh;
        return fresh.value;
      }
      let issued: IssuedToken;
      try {
        issued = await options.fetchToken(span);
      } catch (error) {
        if (error instanceof TokenFetchError) {
          const hold = Math.max(FAILURE_HOLD_MS, error.retryAfterMs ?? 0);
          const failure = { reason: error.reason, status: error.status, until: now() + hold };
          await store.kvSet(failureKey, JSON.stringify(failure), hold);
        }
        throw error;
      }
      await store.kvSet(key, JSON.stringify(issued), Math.max(1, issued.expiresAt - now()));
      local = issued;
      return issued.value;
    } finally {
      // Only release a lock that is still ours (it may have expired and been taken over).
      if ((await store.kvGet(lockKey)) === owner) await store.kvDelete(lockKey);
    }
  };

  const refresh = async (rejected?: string, span?: TraceSpan): Promise<string> => {
    // Bounded by real time, not the injectable clock: the wait is for another process.
    const deadline = performance.now() + options.lockTtlMs + 1_000;
    let pause = POLL_START_MS;
    for (let round = 0; round < 10_000; round++) {
      await failFast();
      const shared = parseStored(StoredTokenSchema, await store.kvGet(key));
      if (usable(shared, rejected)) {
        local = shared;
        return shared.value;
      }
      if (await store.kvSetIfAbsent(lockKey, owner, options.lockTtlMs)) return refreshAsHolder(rejected, span);
      if (performance.now() > deadline) break;
      await sleep(pause);
      pause = Math.min(POLL_MAX_MS, pause * 2);
    }
    throw new TokenFetchError("timeout");
  };

  const get = async (rejected?: string, span?: TraceSpan): Promise<string> => {
    if (usable(local, rejected)) return local.value;
    for (let joined = 0; joined < 3; joined++) {
      if (!inflight) {
        const current = { rejected, promise: refresh(rejected, span) };
        inflight = current;
        current.promise.then(
          () => {
            if (inflight === current) inflight = undefined;
          },
          () => {
            if (inflight === current) inflight = undefined;
          },
        );
      }
      const token = await inflight.promise;
      // A refresh started before this caller's token was refused may hand out that very token.
      if (token !== rejected) return token;
    }
    throw new TokenFetchError("unavailable");
  };

  return {
    get,
    async invalidate(token) {
      if (local?.value === token) local = undefined;
      const shared = parseStored(StoredTokenSchema, await store.kvGet(key));
      if (shared?.value === token) await store.kvDelete(key);
    },
  };
}
