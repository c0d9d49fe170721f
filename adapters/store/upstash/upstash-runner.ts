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
