/** The `error.type` a span records for an unexpected failure. */

/** The failure's class name, never its message (which may carry a URL or a body). */
export function errorType(error: unknown): string {
  return error instanceof Error ? error.name : "unknown";
}
