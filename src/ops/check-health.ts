/** `GET /healthz`: liveness plus store reachability (503 when the store does not answer). */
import type { GatewayContext } from "../gateway-context.ts";

const PING_TIMEOUT_MS = 2000;

export async function checkHealth(ctx: GatewayContext): Promise<Response> {
  const started = performance.now();
  let storeOk = true;
  let error: string | undefined;
  try {
    await Promise.race([
      ctx.store.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("store ping timed out")), PING_TIMEOUT_MS)),
    ]);
  } catch (cause) {
    storeOk = false;
    error = cause instanceof Error ? cause.message : "store unreachable";
  }
  const body = {
    ok: storeOk,
    store: {
      driver: ctx.store.name,
      reachable: storeOk,
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
      error,
    },
    sources: [...ctx.sources.keys()],
  };
  return Response.json(body, { status: storeOk ? 200 : 503 });
}
