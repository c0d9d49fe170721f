/**
 * `GET /healthz`: liveness, store reachability and whether the gateway can record. 503 when the
 * store does not answer or refuses writes ("cannot record", src/ops/write-health.ts). Without
 * operator credentials (src/ops/ops-access.ts) the answer is only `{"ok":…}`.
 */
import type { StoreDriver } from "../store/contract.ts";
import { mayReadOpsDetails, type OpsAccessDeps } from "./ops-access.ts";
import type { WriteHealth } from "./write-health.ts";

/** What `/healthz` reads: the store, write health, the source ids, and what the operator check needs. */
export interface HealthDeps extends OpsAccessDeps {
  store: Pick<StoreDriver, "ping" | "name">;
  writeHealth?: Pick<WriteHealth, "failing">;
  sources: { keys(): Iterable<string> };
}

const PING_TIMEOUT_MS = 2000;

export async function checkHealth(ctx: HealthDeps, request: Request): Promise<Response> {
  const started = performance.now();
  let storeOk = true;
  let error: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ctx.store.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("store ping timed out")), PING_TIMEOUT_MS);
      }),
    ]);
  } catch (cause) {
    storeOk = false;
    error = cause instanceof Error ? cause.message : "store unreachable";
  } finally {
    clearTimeout(timer);
  }
  const failing = ctx.writeHealth?.failing() ?? [];
  const ok = storeOk && failing.length === 0;
  const status = ok ? 200 : 503;
  if (!(await mayReadOpsDetails(ctx, request))) return Response.json({ ok }, { status });
  const body = {
    ok,
    store: {
      driver: ctx.store.name,
      reachable: storeOk,
      writable: failing.length === 0,
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
      error: error ?? (failing.length > 0 ? "cannot record" : undefined),
      failing:
        failing.length > 0 ? failing.map((f) => ({ what: f.what, since: new Date(f.since).toISOString() })) : undefined,
    },
    sources: [...ctx.sources.keys()],
  };
  return Response.json(body, { status });
}
