/**
 * A stream destination's transform, for the live stream (src/stream): the frame's event is the
 * transform's payload, `null` sends nothing. The live stream has no attempts or dead letters, so
 * a failing transform is logged (with its message; its console lines only with
 * `transforms.logToProcess`) and the frame is not sent.
 */
import type { Logger } from "../ops/logger.ts";
import type { EventRecord } from "../store/contract.ts";
import { TransformCompileError } from "./quickjs-sandbox.ts";
import { toTransformEvent } from "./transform-contract.ts";
import type { TransformRegistry } from "./transform-registry.ts";
import { redactHeaders } from "./transforming-sink.ts";

/** Runs stream destinations' transforms; undefined for a destination without one. */
export function createStreamEventTransform(registry: TransformRegistry, logger: Logger, logToProcess = false) {
  return async (record: EventRecord, destination: string): Promise<{ json: string } | null | undefined> => {
    if (!registry.specOf(destination)) return undefined;
    try {
      const transform = registry.compiledFor(destination) ?? (await registry.forDestination(destination));
      if (!transform) return undefined;
      const outcome = await transform.run(toTransformEvent(record.event), {
        destination,
        attempt: 1,
        headers: redactHeaders(record.headers),
      });
      if (outcome.ok) return outcome.skip ? null : { json: outcome.json };
      logger.warn("stream transform failed: the frame is not sent", {
        destination,
        event: record.id,
        error: `transform_error: ${outcome.message}`,
        transform: transform.version,
        // A transform's console lines may hold event data: kept out of the process log unless asked.
        ...(logToProcess ? { logs: outcome.logs } : { logLines: outcome.logs.length }),
      });
    } catch (error) {
      const message = error instanceof TransformCompileError ? error.message : String(error);
      logger.warn("stream transform failed: the frame is not sent", {
        destination,
        event: record.id,
        error: `transform_error: ${message}`,
      });
    }
    return null;
  };
}
