/**
 * Pure helpers of the queue destination: the stream entry of one recorded event and the XADD
 * arguments that append it with approximate trimming. Field names are documented in
 * queue-destination-schema.ts and are part of the public surface.
 */
import type { DeliverableRecord } from "../sink-contract.ts";
import type { QueueDestination } from "./queue-destination-schema.ts";

/** One entry to append: the stream, its length bound and the field/value pairs in order. */
export interface StreamEntry {
  stream: string;
  maxLen: number;
  fields: [name: string, value: string][];
}

/** The entry for `record`: `id`, `type`, `source`, `subject` (when known), `time`, `payload` (the transform's, if any). */
export function buildStreamEntry(
  destination: Pick<QueueDestination, "stream" | "maxLen">,
  record: DeliverableRecord,
): StreamEntry {
  const { event } = record;
  const fields: [string, string][] = [
    ["id", event.id],
    ["type", event.type],
    ["source", event.source],
  ];
  if (event.subject) fields.push(["subject", event.subject]);
  fields.push(["time", event.time], ["payload", record.transformed?.json ?? JSON.stringify(event)]);
  return { stream: destination.stream, maxLen: destination.maxLen, fields };
}

/**
 * `XADD <stream> MAXLEN ~ <maxLen> * field value ...`. Approximate trimming lets Redis drop
 * whole macro nodes only, which keeps XADD O(1); the stream may briefly hold a node's worth
 * (100 entries by default) more than `maxLen`.
 */
export function toXaddArguments(entry: StreamEntry): string[] {
  return [entry.stream, "MAXLEN", "~", String(entry.maxLen), "*", ...entry.fields.flat()];
}

/** Reads stream entry fields (the flat `[name, value, ...]` list Redis returns) into an object. */
export function readStreamFields(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}
