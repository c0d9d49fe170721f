/**
 * The live-stream frames `gateway listen` reads (docs/live-stream.md, Frames), validated with
 * valibot at the boundary. Only what the listener acts on is required; other fields pass.
 */
import * as v from "valibot";

const cursor = v.pipe(v.string(), v.regex(/^\d{1,15}$/, "a cursor"));

/** The CloudEvent of an event frame, as far as the listener reads it. */
export const ListenedEventSchema = v.looseObject({
  id: v.string(),
  type: v.string(),
  subject: v.optional(v.string()),
  time: v.string(),
  service: v.string(),
  data: v.unknown(),
  upstreamid: v.optional(v.string()),
  upstreamidkind: v.optional(v.string()),
  /** CloudEvents distributed-tracing extension (docs/tracing.md). */
  traceparent: v.optional(v.string()),
  tracestate: v.optional(v.string()),
});

export type ListenedEvent = v.InferOutput<typeof ListenedEventSchema>;

export const ListenFrameSchema = v.variant("type", [
  v.looseObject({ type: v.literal("ready"), cursor }),
  v.looseObject({ type: v.literal("event"), cursor, event: ListenedEventSchema }),
  v.looseObject({ type: v.literal("heartbeat"), cursor }),
  v.looseObject({ type: v.literal("pong"), cursor: v.optional(cursor) }),
  v.looseObject({ type: v.literal("subscribed") }),
  v.looseObject({ type: v.literal("unsubscribed") }),
  v.looseObject({
    type: v.literal("error"),
    code: v.string(),
    message: v.string(),
    fatal: v.boolean(),
    details: v.optional(v.unknown()),
  }),
]);

export type ListenFrame = v.InferOutput<typeof ListenFrameSchema>;

/** Parses one frame; undefined when it is not JSON or not a frame the listener knows. */
export function parseListenFrame(text: string): ListenFrame | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(ListenFrameSchema, json);
  return parsed.success ? parsed.output : undefined;
}
