/**
 * The console's only way to the gateway: `fetch` to the same origin with the session's key as
 * `Authorization: Bearer`, answers parsed as JSON, failures turned into `ApiError` carrying the
 * envelope's code and message (docs/ingress-and-verification.md: one error envelope everywhere).
 */
import { readKey } from "./session.ts";

/** A refused or failed call: HTTP status plus the envelope's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: "GET" | "POST";
  body?: unknown;
  /** Use this key instead of the session's (sign-in checks a key before keeping it). */
  key?: string;
  signal?: AbortSignal;
}

/** Calls `path` on the gateway and returns the parsed JSON answer. */
export async function callApi<T>(path: string, options: CallOptions = {}): Promise<T> {
  const headers = new Headers({ accept: "application/json" });
  const key = options.key ?? readKey();
  if (key) headers.set("authorization", `Bearer ${key}`);
  if (options.body !== undefined) headers.set("content-type", "application/json");
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? "GET",
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      credentials: "omit",
      cache: "no-store",
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "network_error", "The gateway cannot be reached.");
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const envelope = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    throw new ApiError(
      response.status,
      envelope?.code ?? "http_error",
      envelope?.message ?? `HTTP ${response.status}`,
      envelope?.details,
    );
  }
  return body as T;
}

/** A query string from a record, leaving out empty values. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** A human sentence for an error (what to do next where it is known). */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (error.status === 401) return "The key was refused: sign in again with an admin key.";
  if (error.status === 403) return `Not allowed with this key: ${error.message}`;
  return `${error.message} (${error.code})`;
}
