/**
 * The OTLP exporter's POST on Node over `node:http`/`node:https` with a keep-alive agent, in
 * place of `fetch`: undici's `fetch` builds Headers, Request, Response and web streams for every
 * export (profiled at ~20 µs per traced webhook, docs/tracing.md "Cost"); here the encoded body is
 * written as is and the answer's body is discarded. Only what the exporter uses is implemented.
 */
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { OtlpPost } from "../tracing/otlp-http-exporter.ts";

/** A `fetch`-shaped POST for the exporter (one agent per exporter, idle sockets kept alive). */
export function createNodeOtlpPost(): OtlpPost {
  const http = new HttpAgent({ keepAlive: true, maxSockets: 4 });
  const https = new HttpsAgent({ keepAlive: true, maxSockets: 4 });
  return (url, init) =>
    new Promise((resolve, reject) => {
      const secure = url.startsWith("https:");
      const send = secure ? httpsRequest : httpRequest;
      const request = send(
        url,
        {
          method: init.method,
          headers: { ...init.headers, "content-length": String(init.body.byteLength) },
          agent: secure ? https : http,
          signal: init.signal,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          response.resume();
          response.on("end", () => resolve({ ok: status >= 200 && status < 300, status, body: null }));
          response.on("error", reject);
        },
      );
      // A timeout rejects with the signal's reason (a TimeoutError), as fetch does.
      request.on("error", (error) => reject(init.signal.aborted ? init.signal.reason : error));
      request.end(init.body);
    });
}
