/**
 * Answers shared by both emulators: JSON bodies, the error envelope both references use
 * (`{ "error": { "code", "message", "details"? } }`), and reading a bounded JSON request body.
 */
import { parseBoundedJson } from "../../src/encoding/json-depth.ts";

/** A JSON answer. */
export function json(status: number, body: unknown, headers: HeadersInit = {}): Response {
  const out = new Headers(headers);
  out.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { status, headers: out });
}

/** The error envelope. */
export function errorAnswer(
  status: number,
  code: string,
  message: string,
  details?: unknown,
  headers: HeadersInit = {},
): Response {
  return json(status, { error: { code, message, ...(details === undefined ? {} : { details }) } }, headers);
}

/** An answer thrown from deep inside a handler (caught by the emulator's error hook). */
export class EmulatorAnswer extends Error {
  constructor(readonly response: Response) {
    super(`emulator answer ${response.status}`);
  }
}

/** Throws the error envelope as an `EmulatorAnswer`. */
export function fail(status: number, code: string, message: string, details?: unknown): never {
  throw new EmulatorAnswer(errorAnswer(status, code, message, details));
}

/** Reads a request body as bytes, refusing more than `limit` bytes (413 `invalid_request`). */
export async function readBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) fail(413, "invalid_request", `body larger than ${limit} bytes`);
  if (!request.body) return new Uint8Array();
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) fail(413, "invalid_request", `body larger than ${limit} bytes`);
    parts.push(chunk);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** Parses bytes as a JSON object, or answers 400 `invalid_request`. */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseBoundedJson(new TextDecoder().decode(bytes));
  } catch {
    fail(400, "invalid_request", "the body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(400, "invalid_request", "the body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** Reads and parses a JSON object body of at most 1 MiB. An empty body reads as `{}`. */
export async function readJsonObject(request: Request, limit = 1024 * 1024): Promise<Record<string, unknown>> {
  const bytes = await readBytes(request, limit);
  if (bytes.byteLength === 0) return {};
  return parseJsonObject(bytes);
}
