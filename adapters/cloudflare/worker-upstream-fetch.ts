/**
 * The proxy's upstream client on Workers (docs/api-proxy.md#compressed-answers): the runtime's
 * `fetch` (through src/proxy/upstream-fetch.ts) decodes `gzip` and `br` answers itself but passes
 * a `deflate` answer through still compressed. This decodes it — zlib-wrapped (RFC 1950, what
 * the header means) or raw (RFC 1951, which some servers send under that name), told apart by
 * the first two bytes — so the proxy, which drops `Content-Encoding` and `Content-Length` for the
 * encodings `fetch` decodes (src/proxy/forward-headers.ts), never passes compressed bytes on as
 * plain JSON.
 */
import { fetchUpstream, type UpstreamFetch } from "../../src/proxy/upstream-fetch.ts";

/** True when `head` starts a zlib stream: deflate method, 32 KiB window at most, header check. */
function isZlibHeader(head: Uint8Array): boolean {
  const [cmf = 0, flg = 0] = head;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** Reads at least `n` bytes (or to the end) from `reader`; the chunks read, in order. */
async function readHead(reader: ReadableStreamDefaultReader<Uint8Array>, n: number): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  while (length < n) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.byteLength;
  }
  return chunks;
}

/** `response` with a `deflate` body decoded (headers unchanged); any other response as it is. */
export async function decodeDeflate(response: Response): Promise<Response> {
  const encoding = response.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding !== "deflate" || !response.body) return response;
  const reader = response.body.getReader();
  const pending = await readHead(reader, 2);
  const first = new Uint8Array(2);
  let at = 0;
  for (const chunk of pending) {
    const part = chunk.subarray(0, first.byteLength - at);
    first.set(part, at);
    at += part.byteLength;
    if (at === first.byteLength) break;
  }
  const compressed = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = pending.shift();
      if (next) return controller.enqueue(next);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const format: CompressionFormat = at === 2 && isZlibHeader(first) ? "deflate" : "deflate-raw";
  const decoded = compressed.pipeThrough(
    new DecompressionStream(format) as unknown as ReadableWritablePair<Uint8Array, Uint8Array>,
  );
  return new Response(decoded, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** `fetchUpstream`, with `deflate` answers decoded as the runtime does for gzip and br. */
export const workerUpstreamFetch: UpstreamFetch = async (url, init) => decodeDeflate(await fetchUpstream(url, init));
