/**
 * Puts a destination's transform in front of its sink: the transform turns the CloudEvent about
 * to be delivered into the payload, or skips the event (`null`). A transform failure fails the
 * attempt as `transform_error` with the transform's logs; it is permanent (the same input fails
 * the same way), so the delivery goes to the dead letters and replay after a fix delivers it.
 */
import type { AttemptInfo, DeliveryAttemptResult, Sink } from "../delivery/sink-contract.ts";
import type { EventRecord } from "../store/contract.ts";
import { TransformCompileError } from "./quickjs-sandbox.ts";
import { toTransformEvent } from "./transform-contract.ts";
import type { TransformRegistry } from "./transform-registry.ts";

/** Received header names that carry credentials: shown to a transform as `[redacted]`. */
const CREDENTIAL_HEADER = /authorization|cookie|signature|secret|token|api-?key|password/i;

/** The received headers as a transform sees them. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = CREDENTIAL_HEADER.test(name) ? "[redacted]" : value;
  return out;
}

/** `sink` with the transform of its destination in front (the sink itself when it has none). */
export function withTransform(sink: Sink, registry: TransformRegistry): Sink {
  if (!registry.specOf(sink.destinationId)) return sink;
  return {
    destinationId: sink.destinationId,
    close: () => sink.close(),
    async deliver(record: EventRecord, signal: AbortSignal, info?: AttemptInfo): Promise<DeliveryAttemptResult> {
      let transform = registry.compiledFor(sink.destinationId);
      try {
        transform ??= await registry.forDestination(sink.destinationId);
      } catch (error) {
        const message = error instanceof TransformCompileError ? error.message : String(error);
        return { ok: false, permanent: true, code: "transform_error", error: `transform_error: ${message}`, logs: [] };
      }
      if (!transform) return sink.deliver(record, signal, info);
      const outcome = await transform.run(toTransformEvent(record.event), {
        destination: sink.destinationId,
        attempt: info?.attempt ?? 1,
        headers: redactHeaders(record.headers),
      });
      const version = transform.version;
      if (!outcome.ok) {
        return {
          ok: false,
          permanent: true,
          code: "transform_error",
          error: `transform_error: ${outcome.message}`,
          logs: outcome.logs,
          transform: version,
        };
      }
      if (outcome.skip) return { ok: true, skipped: true, transform: version };
      const result = await sink.deliver({ ...record, transformed: { json: outcome.json } }, signal, info);
      return { ...result, transform: version };
    },
  };
}
