/**
 * Tuning of the live stream (`/ws`, `/stream`): heartbeat period, idle timeout, the send-buffer
 * bound past which a subscriber counts as a slow consumer, replay paging, and the lifetime of
 * tokens minted by `POST /auth/stream-token`. Defaults suit production; tests shorten them
 * through `createGateway({ stream })` or, for a real process, the `GATEWAY_STREAM_*` variables.
 */
import * as v from "valibot";

const ms = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

export const StreamOptionsSchema = v.strictObject({
  /** Period of heartbeat frames (WebSocket JSON `heartbeat`, SSE comment line). Default 25 000 ms. */
  heartbeatMs: v.optional(ms(10, 3_600_000), 25_000),
  /**
   * A connection whose peer shows no sign of life for this long is dropped: on WebSocket no pong
   * to the protocol ping (enforced by the runtime adapter), on SSE no read of the stream.
   * Default 60 000 ms.
   */
  idleTimeoutMs: v.optional(ms(10, 3_600_000), 60_000),
  /** Bytes queued for one subscriber past which it is disconnected as a slow consumer. Default 1 MiB. */
  maxBufferedBytes: v.optional(ms(1024, 256 * 1024 * 1024), 1024 * 1024),
  /** Live events held for one subscriber while its replay runs. Default 10 000. */
  maxReplayBacklog: v.optional(ms(1, 1_000_000), 10_000),
  /** Event log page size of a replay. Default 500. */
  replayPageSize: v.optional(ms(1, 500), 500),
  /** Subscriptions one WebSocket may hold at once. Default 16. */
  maxSubscriptions: v.optional(ms(1, 256), 16),
  /** Default lifetime of a minted stream token, seconds. Default 300. */
  tokenTtlSeconds: v.optional(ms(1, 86_400), 300),
  /** Longest lifetime a caller may ask for, seconds. Default 3600. */
  maxTokenTtlSeconds: v.optional(ms(1, 86_400), 3600),
});

export type StreamOptionsInput = v.InferInput<typeof StreamOptionsSchema>;
export type StreamOptions = v.InferOutput<typeof StreamOptionsSchema>;

/** Resolves the options with their defaults; throws naming the field when a value is out of range. */
export function resolveStreamOptions(input: StreamOptionsInput = {}): StreamOptions {
  const result = v.safeParse(StreamOptionsSchema, input);
  if (!result.success) {
    const issue = result.issues[0];
    throw new Error(`stream options: ${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`);
  }
  return result.output;
}

const ENV_NAMES: Record<string, keyof StreamOptions> = {
  GATEWAY_STREAM_HEARTBEAT_MS: "heartbeatMs",
  GATEWAY_STREAM_IDLE_TIMEOUT_MS: "idleTimeoutMs",
  GATEWAY_STREAM_MAX_BUFFERED_BYTES: "maxBufferedBytes",
  GATEWAY_STREAM_TOKEN_TTL_SECONDS: "tokenTtlSeconds",
};

/** Reads the `GATEWAY_STREAM_*` variables (integers) that are set; used by runtime entries. */
export function readStreamOptionsFromEnv(env: Record<string, string | undefined>): StreamOptionsInput {
  const out: Record<string, number> = {};
  for (const [name, key] of Object.entries(ENV_NAMES)) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    if (!/^\d{1,12}$/.test(value)) throw new Error(`${name}: expected a non-negative integer, received "${value}"`);
    out[key] = Number(value);
  }
  return out;
}
