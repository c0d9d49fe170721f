/**
 * What `gateway listen` (listen-command.ts) runs: the Node side of src/listen. Parses the
 * options, finds the credential (flag, `GATEWAY_ADMIN_KEY` or its alias `GATEWAY_API_KEY`, or the development admin key of
 * `.data/dev-secrets.json`), keeps cursor and local secret in a state file (listen-state.ts),
 * opens the WebSocket with `ws`, prints one line per event, and stops cleanly on SIGINT/SIGTERM
 * (an event being delivered then is delivered again on the next start).
 */
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { fromBase64 } from "../../src/encoding/base64.ts";
import { parseFilter } from "../../src/filters/parse-filter.ts";
import {
  buildForwardRequest,
  type ListenFormat,
  type RecordedDelivery,
} from "../../src/listen/build-forward-request.ts";
import { formatEventLine } from "../../src/listen/format-event-line.ts";
import { forwardEvent } from "../../src/listen/forward-event.ts";
import type { ListenedEvent } from "../../src/listen/listen-frames.ts";
import { ListenRefusedError, runListenLoop } from "../../src/listen/listen-loop.ts";
import { recordedTraceOf, startForwardSpan } from "../../src/listen/trace-forward.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { credentialOf as credentialFromEnv } from "./admin-key-env.ts";
import { CliFailure, fetchGateway, UsageError } from "./cli-errors.ts";
import {
  defaultListenStatePath,
  generateListenSecret,
  type ListenState,
  loadListenState,
  saveListenState,
} from "./listen-state.ts";
import { createNodeCrypto } from "./node-crypto.ts";
import { createNodeTracing } from "./node-tracing.ts";

function httpUrl(text: string | undefined, what: string): string {
  try {
    const url = new URL(text ?? "");
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString().replace(/\/$/, "");
  } catch {}
  throw new UsageError(`${what}: an http(s) URL is required, received ${text ?? "nothing"}`);
}

/** The credential: flags first, then GATEWAY_ADMIN_KEY (alias GATEWAY_API_KEY), then the development admin key. */
async function credentialOf(values: { key?: string; token?: string }): Promise<{ value: string; from: string }> {
  if (values.key && values.token) throw new UsageError("give --key or --token, not both");
  return credentialFromEnv(values);
}

/** `--filter '{"data":{"amount":{"$gte":100}}}'`: checked here, so a typo is named before connecting. */
function filterOption(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError("--filter: a filter as JSON (docs/filters.md)");
  }
  const parsed = parseFilter(value);
  if (!parsed.ok) {
    const problems = parsed.problems.map((p) => `${["filter", ...p.path].join(".")}: expected ${p.message}`);
    throw new UsageError(`--filter: ${problems.join("; ")}`);
  }
  return JSON.stringify(value);
}

/** Reads the recorded upstream delivery when the credential may read the event log. */
function createRecordedReader(gateway: string, authorization: string, notice: (line: string) => void) {
  let readable = true;
  return async (id: string): Promise<RecordedDelivery | undefined> => {
    if (!readable) return undefined;
    const response = await fetch(`${gateway}/events/${encodeURIComponent(id)}`, { headers: { authorization } });
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      readable = false;
      notice("the credential cannot read the event log: upstream bodies are rebuilt from the event data");
      return undefined;
    }
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new Error(`GET /events/${id} answered ${response.status}`);
    const record = (await response.json()) as { raw_body_base64?: unknown; headers?: unknown };
    if (typeof record.raw_body_base64 !== "string" || typeof record.headers !== "object" || !record.headers) {
      return undefined;
    }
    return { body: fromBase64(record.raw_body_base64), headers: record.headers as Record<string, string> };
  };
}

/** Fails with one line when nothing answers at the gateway's address (later drops are retried). */
async function assertReachable(gateway: string): Promise<void> {
  const response = await fetchGateway(`${gateway}/healthz`, gateway, "Check the <gateway-url> argument.");
  await response.body?.cancel();
}

/** Runs the command until SIGINT/SIGTERM. */
export async function runListen(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      "forward-to": { type: "string" },
      source: { type: "string", multiple: true },
      type: { type: "string", multiple: true },
      filter: { type: "string" },
      format: { type: "string", default: "cloudevents" },
      key: { type: "string" },
      token: { type: "string" },
      state: { type: "string" },
      "retry-max-ms": { type: "string", default: "30000" },
    },
  });
  const gateway = httpUrl(positionals[0], "<gateway-url>");
  const target = httpUrl(values["forward-to"], "--forward-to");
  const format = values.format as ListenFormat;
  if (format !== "cloudevents" && format !== "upstream") throw new UsageError("--format: cloudevents or upstream");
  const retryMaxMs = Number(values["retry-max-ms"]);
  if (!Number.isInteger(retryMaxMs) || retryMaxMs < 10) throw new UsageError("--retry-max-ms: an integer >= 10");
  const filters = { source: values.source ?? [], type: values.type ?? [], filter: filterOption(values.filter) };
  const credential = await credentialOf(values);
  await assertReachable(gateway);
  const authorization = `Bearer ${credential.value}`;
  const statePath = values.state ?? defaultListenStatePath({ gateway, target, filters, format });
  const print = (line: string) => console.log(line);
  const notice = (line: string) => console.log(`# ${line}`);

  let state: ListenState = (await loadListenState(statePath)) ?? {
    version: 1,
    gateway,
    forwardTo: target,
    secret: generateListenSecret(),
  };
  await saveListenState(statePath, state);
  notice(`forwarding ${gateway} -> ${target} (format ${format}, credential from ${credential.from})`);
  // Printed on purpose: the local app needs it to verify what it receives; it signs only
  // deliveries to this machine's app and is kept in the state file so restarts keep it.
  notice(`signing secret: ${state.secret}   (state: ${statePath})`);

  const crypto = createNodeCrypto();
  // Forwards are traced when OTEL_* names an endpoint (docs/tracing.md).
  const tracing = await createNodeTracing(process.env, {
    debug: () => {},
    info: () => {},
    warn: (msg, fields) => notice(`${msg}: ${String(fields?.message ?? "")}`),
    error: (msg) => notice(msg),
  });
  const stop = new AbortController();
  const recordedOf = createRecordedReader(gateway, authorization, notice);
  const handle = async (event: ListenedEvent) => {
    const recorded = format === "upstream" ? await recordedOf(event.id) : undefined;
    const span = tracing && startForwardSpan(tracing, event, target);
    const outcome = await forwardEvent(
      target,
      () => buildForwardRequest(format, event, state.secret, Date.now(), crypto, builtinServices, recorded),
      {
        maxDelayMs: retryMaxMs,
        minDelayMs: Math.min(500, retryMaxMs),
        signal: stop.signal,
        trace: span ? span.headers() : recordedTraceOf(event),
        onFailure: (failure) =>
          print(
            formatEventLine(
              event,
              {
                status: failure.status ?? failure.error ?? "failed",
                latencyMs: failure.latencyMs,
                retryingAfterAttempt: failure.attempt,
              },
              Date.now(),
            ),
          ),
      },
    ).catch((error: unknown) => {
      span?.end("aborted");
      throw error;
    });
    span?.setAttributes({ "http.response.status_code": outcome.status, "gateway.listen.attempts": outcome.attempts });
    span?.end();
    return () => print(formatEventLine(event, outcome, Date.now()));
  };

  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await runListenLoop({
      gatewayUrl: gateway,
      filters,
      openSocket: (url) => new WebSocket(url, { headers: { authorization } }),
      loadCursor: () => state.cursor,
      saveCursor: async (cursor) => {
        state = { ...state, cursor };
        await saveListenState(statePath, state);
      },
      handle,
      notice,
      signal: stop.signal,
    });
  } catch (error) {
    if (error instanceof ListenRefusedError) throw new CliFailure(error.message);
    throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await tracing?.shutdown();
  }
}
