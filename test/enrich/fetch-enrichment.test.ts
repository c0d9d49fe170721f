/**
 * The enrichment fetch's size bound holds for an answer that declares no length (chunked): the
 * body is read only up to MAX_ENRICHMENT_BYTES, then refused as `too_large`.
 */
import { expect, it } from "vitest";
import { fetchEnrichment, MAX_ENRICHMENT_BYTES } from "../../src/enrich/fetch-enrichment.ts";
import type { ProxyUpstream, UpstreamCredentials } from "../../src/proxy/proxy-deps.ts";
import type { UpstreamFetch } from "../../src/proxy/upstream-fetch.ts";

const credentials: UpstreamCredentials = {
  authorize: async () => ({ header: "Bearer test" }),
  invalidate: async () => {},
};
const upstream = { baseUrl: "http://127.0.0.1:9/api" } as ProxyUpstream["config"];

/** An answer streamed in 16 KiB chunks with no Content-Length; counts what was pulled. */
function streamedAnswer(totalBytes: number) {
  const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
  const pulled = { bytes: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= totalBytes) return controller.close();
      pulled.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { response: new Response(body, { status: 200 }), pulled };
}

it("refuses a chunked answer past the bound without reading the rest", async () => {
  const { response, pulled } = streamedAnswer(64 * 1024 * 1024);
  const fetcher: UpstreamFetch = async () => response;
  const result = await fetchEnrichment(fetcher, upstream, credentials, "/agreements/a1", 5_000);
  expect(result).toEqual({ ok: false, error: "too_large" });
  expect(pulled.bytes).toBeLessThan(MAX_ENRICHMENT_BYTES + 64 * 1024);
});

it("attaches a chunked answer within the bound", async () => {
  const json = JSON.stringify({ id: "a1", title: "Lease" });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(json));
      controller.close();
    },
  });
  const fetcher: UpstreamFetch = async () => new Response(body, { status: 200 });
  const result = await fetchEnrichment(fetcher, upstream, credentials, "/agreements/a1", 5_000);
  expect(result).toEqual({ ok: true, resource: { id: "a1", title: "Lease" } });
});
