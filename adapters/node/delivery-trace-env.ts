/**
 * `GATEWAY_DELIVERY_TRACE=<file>`: turns on the per-stage delivery timings
 * (src/delivery/stage-trace.ts) and appends one JSON line per second to `<file>` with the
 * window's percentiles per stage (ms after each event's `receivedAt`). For latency
 * investigations (`npm run bench -- latency` passes it through); off when unset or empty.
 */
import { appendFileSync } from "node:fs";
import { enableStageTrace, takeStageWindow } from "../../src/delivery/stage-trace.ts";

export const DELIVERY_TRACE_ENV = "GATEWAY_DELIVERY_TRACE";

/** Starts the trace when the variable names a file; returns what stops it (writing the last window). */
export function startDeliveryTraceFromEnv(
  env: Record<string, string | undefined>,
  clock: () => number,
): (() => void) | undefined {
  const file = env[DELIVERY_TRACE_ENV];
  if (file === undefined || file === "") return undefined;
  // A file that cannot be written is said at start (a typo would otherwise trace nothing, silently).
  try {
    appendFileSync(file, "");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`${DELIVERY_TRACE_ENV}: cannot write ${file} (${code})`);
  }
  const disable = enableStageTrace(clock);
  const write = () => {
    const window = takeStageWindow();
    if (Object.keys(window).length === 0) return;
    try {
      appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), ...window })}\n`);
    } catch {
      // A write failing later (a full disk) is not worth stopping the gateway for.
    }
  };
  const timer = setInterval(write, 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    write();
    disable();
  };
}
