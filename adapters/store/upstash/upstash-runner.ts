/**
 * The Upstash REST client (`@upstash/redis`) as a `ScriptRunner`: the same Lua scripts as the
 * TCP driver, sent by EVALSHA (EVAL once when the server lacks the script). The REST API has no
 * MULTI/EXEC front in every deployment, so every multi-key step is one script. Responses are
 * taken raw (no JSON or base64 decoding), exactly as the TCP client returns them.
 */
import { Redis } from "@upstash/redis";
import {
  isNoScriptError,
  type LuaScript,
  type ScriptReply,
  type ScriptRunner,
  scriptSha,
} from "../redis/script-runner.ts";

export interface UpstashRunnerOptions {
  /** REST URL, e.g. `https://<db>.upstash.io`. */
  url: string;
  /** REST token (from the environment, never from a committed file). */
  token: string;
  /** Use this client instead of building one (tests, custom fetch). */
  client?: Redis;
}

/** URL and token from the options, else from `UPSTASH_REDIS_REST_URL` / `UPSTASH_REDIS_REST_TOKEN`. */
export function resolveUpstashConnection(options: { url?: string; token?: string }): { url: string; token: string } {
  const url = options.url ?? process.env.UPSTASH_REDIS_REST_URL;
  const token = options.token ?? process.env.UPSTASH_REDIS_REST_TOKEN;
  if (!url) throw new Error("store.url: the Upstash REST URL, or set UPSTASH_REDIS_REST_URL");
  if (!token) throw new Error("UPSTASH_REDIS_REST_TOKEN: the Upstash REST token must be set");
  return { url, token };
}

/** Creates the runner; the client is built lazily on the first call. */
export function createUpstashRunner(options: UpstashRunnerOptions): ScriptRunner {
  let client = options.client;
  const redis = () => {
    client ??= new Redis({
      url: options.url,
      token: options.token,
      automaticDeserialization: false,
      responseEncoding: false,
      enableTelemetry: false,
      // Fail fast: the ingress answers 503 + Retry-After and the upstream retries.
      retry: { retries: 1, backoff: () => 50 },
    });
    return client;
  };
  const shas = new Map<LuaScript, Promise<string>>();
  const shaOf = (script: LuaScript) => {
    let sha = shas.get(script);
    if (!sha) {
      sha = scriptSha(script);
      shas.set(script, sha);
    }
    return sha;
  };
  return {
    name: "upstash",
    ordered: false,
    async run(script, keys, args) {
      const k = [...keys];
      const a = args.map(String);
      try {
        return (await redis().evalsha(await shaOf(script), k, a)) as ScriptReply;
      } catch (error) {
        if (!isNoScriptError(error)) throw error;
        return (await redis().eval(script.source, k, a)) as ScriptReply;
      }
    },
    async ping() {
      await redis().ping();
    },
    async close() {},
  };
}
