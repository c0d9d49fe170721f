/**
 * `gateway trigger <sourceId> <eventType>`: sends a documented sample webhook, signed exactly as
 * the source's service signs, to a running gateway (docs/cli.md#gateway-trigger). It says which
 * secret it
 * signs with (resolve-trigger-secret.ts), never the secret, and prints one line per answer.
 */
import { defineCommand } from "citty";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import { buildSampleDelivery, sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { CliFailure, fetchGateway, UsageError } from "./cli-errors.ts";
import { dataDirOf, loadConfigFile } from "./load-config.ts";
import { createNodeCrypto } from "./node-crypto.ts";
import { resolveTriggerSecret } from "./resolve-trigger-secret.ts";

interface RawSource {
  id?: unknown;
  secrets?: unknown;
}

/** Validates only what trigger needs (server and the one source), naming the source's real index. */
function resolveTriggerConfig(raw: Record<string, unknown>, source: RawSource, index: number, secret: string) {
  try {
    return resolveConfig({ server: raw.server, sources: [{ ...source, secrets: [secret] }] }, { ...process.env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(error.problems.map((p) => p.replace(/^sources\.0\b/, `sources.${index}`)));
  }
}

/** One line for an answer: the gateway's JSON as is, anything else summarised (no HTML pages). */
function describeAnswer(response: Response, text: string): string {
  const type = response.headers.get("content-type") ?? "no content type";
  if (type.includes("json") && text.length <= 2000) return `${response.status} ${text}`;
  const kind = type.split(";")[0];
  return `${response.status} (${kind}, ${text.length} bytes: not a gateway answer; see the log of what serves that URL)`;
}

export const triggerCommand = defineCommand({
  meta: { name: "trigger", description: "Send a signed sample webhook of a source to a running gateway" },
  args: {
    source: {
      type: "positional",
      required: true,
      description: "A source id of the configuration",
    },
    type: { type: "positional", required: true, description: "A documented event type of the source's service" },
    url: { type: "string", valueHint: "url", description: "The gateway (default: server host and port of the config)" },
    config: {
      type: "string",
      valueHint: "file",
      description: "The gateway's config file (default: the zero-config one)",
    },
    times: { type: "string", valueHint: "n", default: "1", description: "Send the same delivery n times (1..100)" },
    id: { type: "string", valueHint: "unique", description: "The delivery's unique id (default: random)" },
  },
  async run({ args }) {
    const raw = (await loadConfigFile(args.config)) as Record<string, unknown>;
    const sources = (Array.isArray(raw?.sources) ? raw.sources : []) as RawSource[];
    const index = sources.findIndex((s) => s?.id === args.source);
    const source = sources[index];
    if (!source) {
      const ids = sources.map((s) => String(s?.id)).join(", ");
      throw new UsageError(`no source "${args.source}" in the configuration (sources: ${ids || "none"})`);
    }
    const times = Number(args.times);
    if (!Number.isInteger(times) || times < 1 || times > 100) throw new UsageError("--times: an integer 1..100");
    const entry = Array.isArray(source.secrets) ? source.secrets[0] : undefined;
    if (typeof entry !== "string") throw new ConfigError([`sources.${index}.secrets: expected at least one secret`]);
    const rawServer = (raw.server ?? {}) as { host?: unknown; port?: unknown };
    const base = (args.url ?? `http://${rawServer.host ?? "127.0.0.1"}:${rawServer.port ?? 8787}`).replace(/\/$/, "");
    try {
      new URL(base);
    } catch {
      throw new UsageError(`--url: an http(s) URL is required, received ${base}`);
    }
    const secret = await resolveTriggerSecret({
      entry,
      field: `sources.${index}.secrets.0`,
      configName: args.config ?? "the default config",
      zeroConfig: args.config === undefined,
      dataDir: dataDirOf(raw),
      targetUrl: base,
      env: process.env,
    });
    const config = resolveTriggerConfig(raw, source, index, secret.value);
    const service = config.sources[0]?.service as NonNullable<(typeof config.sources)[0]>["service"];
    const types = sampleEventTypes(service);
    if (!types.includes(args.type)) {
      throw new UsageError(
        `"${args.type}" is not a documented event type of ${args.source}; one of: ${types.join(", ")}`,
      );
    }
    const delivery = await buildSampleDelivery(createNodeCrypto(), service, args.type, secret.value, {
      uniqueId: args.id,
    });
    const target = `${base}/webhooks/${encodeURIComponent(args.source)}`;
    console.log(`signing with ${secret.from}`);
    let failed = false;
    for (let i = 0; i < times; i++) {
      const init = { method: "POST", headers: delivery.headers, body: delivery.body };
      const response = await fetchGateway(target, base, "Pass its address with --url.", init);
      const text = await response.text();
      console.log(`POST ${target} -> ${describeAnswer(response, text)}`);
      if (response.status === 401 && text.includes('"invalid_signature"')) {
        throw new CliFailure(`the gateway refused the signature: it verifies with another secret than ${secret.from}`);
      }
      if (response.status >= 300) failed = true;
    }
    if (failed) process.exitCode = 1;
  },
});
