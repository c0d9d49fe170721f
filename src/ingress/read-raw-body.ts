/**
 * Reads a request body as the exact bytes received, refusing more than `limit` bytes without
 * buffering them: a declared Content-Length over the limit is refused before reading, and a
 * streamed body is cut off as soon as it passes the limit.
 */
import { concatBytes } from "../encoding/concat-bytes.ts";

export type RawBodyResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: "too_large" };

const EMPTY = new Uint8Array(0);

/** Reads the body of `request` up to `limit` bytes. */
export async function readRawBody(request: Request, limit: number): Promise<RawBodyResult> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, reason: "too_large" };
  }
  if (!request.body) return { ok: true, bytes: EMPTY };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, reason: "too_large" };
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] as Uint8Array };
  return { ok: true, bytes: concatBytes(chunks, size) };
}
