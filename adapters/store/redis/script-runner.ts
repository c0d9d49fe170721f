/**
 * The one thing the Redis-backed store, outbox and hub need from a Redis client: run a Lua
 * script atomically (EVALSHA, falling back to EVAL when the server does not know the script
 * yet), plus PING and close. Both the TCP driver (ioredis) and the REST driver (@upstash/redis)
 * implement it, so every data-structure decision lives once, in the scripts
 * (docs/several-instances.md).
 */

/** A Lua script and its SHA-1 (computed once by `defineScript`). */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
}

/** A reply as both clients return it: strings, integers, nulls and nested arrays. */
export type ScriptReply = string | number | null | ScriptReply[];

export interface ScriptRunner {
  /** `"redis"` or `"upstash"`: the driver name the store reports. */
  readonly name: string;
  /**
   * True when calls reach Redis in the order they were made (one TCP connection); false for
   * REST, where concurrent requests may overtake each other and writers must serialize.
   */
  readonly ordered: boolean;
  /** Runs `script` with `keys` and `args`; rejects when Redis cannot be reached. */
  run(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<ScriptReply>;
  /** Rejects when Redis does not answer. */
  ping(): Promise<void>;
  /** Closes the connection (after the commands already sent). */
  close(): Promise<void>;
}

/** Names a script (the name shows in errors and metrics, never in keys). */
export function defineScript(name: string, source: string): LuaScript {
  return { name, source };
}

/** Hex SHA-1 of a script, with Web Crypto (runs on Node and on Workers alike). */
export async function scriptSha(script: LuaScript): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(script.source));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** True for the error a server answers to EVALSHA of a script it has not cached. */
export function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.includes("NOSCRIPT");
}
