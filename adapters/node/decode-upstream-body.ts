/**
 * Decoding of a compressed upstream answer on Node (docs/api-proxy.md#compressed-answers). The
 * proxy asks upstreams for `Accept-Encoding: identity`; one that compresses anyway (gzip, deflate,
 * br) has its body decoded here, as a stream with backpressure (a small bomb never sits whole in
 * memory), and the client gets the plain bytes without `Content-Encoding` or `Content-Length`
 * (forward-headers.ts drops both for these encodings). Undici's `dispatch` does not decode, unlike
 * the `fetch` of Workers and of Node, which the core's default upstream fetch uses.
 */
import { pipeline, Readable, Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from "node:zlib";

/** The decoder for one `Content-Encoding` value, or undefined when it is not one we decode. */
export function decoderFor(encoding: string | string[] | undefined): Transform | undefined {
  if (typeof encoding !== "string") return undefined;
  switch (encoding.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "br":
      return createBrotliDecompress();
    case "deflate":
      return createDeflateDecoder();
    default:
      return undefined;
  }
}

/**
 * `deflate` is meant to be zlib-wrapped (RFC 9110), but some servers send raw deflate: the first
 * two bytes tell (a zlib header is CM 8 and a multiple of 31), as browsers and undici decide.
 */
function createDeflateDecoder(): Transform {
  let inner: Transform | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!inner) {
        const first = chunk[0] ?? 0;
        const zlib = chunk.length >= 2 && (first & 0x0f) === 8 && (first * 256 + (chunk[1] ?? 0)) % 31 === 0;
        inner = zlib ? createInflate() : createInflateRaw();
        inner.on("data", (data: Buffer) => this.push(data));
        inner.on("error", (error) => this.destroy(error));
      }
      if (inner.write(chunk)) callback();
      else inner.once("drain", () => callback());
    },
    flush(callback) {
      if (!inner) return callback();
      inner.once("end", () => callback());
      inner.end();
    },
  });
}

/** `body` decoded by `decoder`; destroying the result destroys the source (the upstream call). */
export function decodeBody(body: Uint8Array | Readable, decoder: Transform): Readable {
  const source =
    body instanceof Readable ? body : Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)]);
  return pipeline(source, decoder, () => {});
}
