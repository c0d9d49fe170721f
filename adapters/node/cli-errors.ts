/**
 * The two kinds of error a `gateway` command throws on purpose: bad command-line input (printed
 * with the command's usage, exit 64) and an expected failure (one line, exit 1). Anything else
 * is a bug and keeps its stack (adapters/node/run-cli.ts).
 */

/** Bad command-line input: the CLI prints the message and the command's usage, exit 64 (EX_USAGE). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** An expected failure (gateway not reachable, port in use, missing secret): one line, exit 1. */
export class CliFailure extends Error {
  override readonly name = "CliFailure";
}

/** The `code` of a Node system error (`ECONNREFUSED`, `EADDRINUSE`), also when wrapped in `cause`. */
export function systemErrorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    const nested = (e as { errors?: unknown[] }).errors?.[0];
    if (nested) return systemErrorCode(nested);
  }
  return undefined;
}

/**
 * Fetches `url` from the gateway at `gatewayUrl`; a gateway that cannot be reached becomes one
 * line naming it (`gateway not reachable at http://127.0.0.1:8787 (ECONNREFUSED): ...`), `hint`
 * saying how to point the command elsewhere.
 */
export async function fetchGateway(
  url: string,
  gatewayUrl: string,
  hint: string,
  init?: RequestInit,
): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const code = systemErrorCode(error) ?? (cause instanceof Error ? cause.message : String(error));
    throw new CliFailure(`gateway not reachable at ${gatewayUrl} (${code}): is it running (\`npm start\`)? ${hint}`);
  }
}
