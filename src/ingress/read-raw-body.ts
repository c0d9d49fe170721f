/**
 * Reads a request body as the exact bytes received, refusing more than `limit` bytes without
 * buffering them: a declared Content-Length over the limit is refused before reading, and a
 * streamed body is cut off as soon as it passes the limit. With a deadline, a body that has not
 * ended in time is abandoned (`timeout`), so a slow sender cannot hold the request open. With a
 * lease of the process's body budget (body-budget.ts), each chunk is taken from it as it arrives,
 * and a chunk that does not fit ends the read (`over_budget`).
 */
import { concatBytes } from "../encoding/concat-bytes.ts";
import type { BodyLease } from "./body-budget.ts";

export type RawBodyResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "timeout" | "over_budget" };

const EMPTY = new Uint8Array(0);

/**
 * Reads the body of `request` (or of a response: only its headers and body are read) up to
 * `limit` bytes, within `deadlineMs` when given, taking its bytes from `lease` when given.
 */
export async function readRawBody(
  request: Pick<Request, "headers" | "body">,
  limit: number,
  deadlineMs?: number,
  lease?: BodyLease,
): Promise<RawBodyResult> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, reason: "too_large" };
  }
  if (!request.body) return { ok: true, bytes: EMPTY };
  const reader = request.body.getReader();
  let timedOut = false;
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          reader.cancel().catch(() => {});
        }, deadlineMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) return { ok: false, reason: "timeout" };
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return { ok: false, reason: "too_large" };
      }
      if (lease && !lease.take(value.byteLength)) {
        await reader.cancel().catch(() => {});
        return { ok: false, reason: "over_budget" };
      }
      chunks.push(value);
    }
  } catch (error) {
    if (timedOut) return { ok: false, reason: "timeout" };
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] as Uint8Array };
  return { ok: true, bytes: concatBytes(chunks, size) };
}
