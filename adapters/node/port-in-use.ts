/**
 * "Port N in use" for `gateway serve` and `gateway emulate`: a probe that fails before anything
 * starts, and the one line that says whose port it is and the flag that changes it.
 */
import { createServer } from "node:net";
import { CliFailure, systemErrorCode } from "./cli-errors.ts";

/** Whose port: the gateway's, or the emulators' of the zero-config sandbox (gateway port + 1). */
export type PortOwner = "gateway" | "sandbox-emulators" | "emulators";

/** The expected failure for `port` of `owner` being taken. */
export function portInUse(owner: PortOwner, host: string, port: number): CliFailure {
  const where = `port ${port} on ${host} is in use`;
  if (owner === "gateway") {
    return new CliFailure(`${where} (the gateway's port; is another gateway running?): choose another with --port <n>`);
  }
  if (owner === "emulators") return new CliFailure(`${where} (the emulators' port): choose another with --port <n>`);
  return new CliFailure(
    `${where} (the emulators' port: the zero-config gateway starts them on its --port + 1): ` +
      "choose another gateway port with --port <n> (the emulators then take n+1), or set GATEWAY_EMULATORS=off",
  );
}

/** Rethrows EADDRINUSE as `portInUse`, anything else as is. */
export function explainListenError(error: unknown, owner: PortOwner, host: string, port: number): never {
  if (systemErrorCode(error) === "EADDRINUSE") throw portInUse(owner, host, port);
  throw error;
}

/** Throws `portInUse` when `host:port` cannot be bound right now (port 0 always can). */
export async function assertPortFree(owner: PortOwner, host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => resolve());
  }).catch((error: unknown) => explainListenError(error, owner, host, port));
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
