/**
 * `gateway emulate [--host 127.0.0.1] [--port 8788] [--time-scale 1] [--only <service>]`: runs
 * the upstream emulators of emulators/registry.ts alone (README, Sandbox), prints where they
 * listen and the sandbox credentials to configure a gateway or an app with, and stops on
 * SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { emulatorRegistry } from "../../emulators/registry.ts";
import { describeEmulators } from "./sandbox.ts";
import { startEmulators } from "./start-emulators.ts";

/** Runs the command; resolves once the emulators listen. */
export async function emulateCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "8788" },
      "time-scale": { type: "string", default: "1" },
      only: { type: "string" },
    },
  });
  const port = Number(values.port);
  const timeScale = Number(values["time-scale"]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port: an integer 0..65535");
  if (!(timeScale > 0 && timeScale <= 100)) throw new Error("--time-scale: a number above 0, at most 100");
  const names = [...emulatorRegistry.keys()];
  if (values.only !== undefined && !names.includes(values.only)) throw new Error(`--only: one of ${names.join(", ")}`);
  const emulators = await startEmulators({
    host: values.host,
    port,
    timeScale,
    only: values.only === undefined ? undefined : { [values.only]: {} },
  });
  console.log(describeEmulators(emulators));
  // Printed on purpose: credentials of an in-memory emulator, worthless anywhere else.
  const lines = ["SANDBOX credentials (emulated services only):"];
  for (const { name, emulator, apiUrl } of emulators.served) {
    for (const [variable, value] of Object.entries(emulator.upstreamEnv(apiUrl))) lines.push(`  ${variable}=${value}`);
    lines.push(`  ${name} webhook signing secret: ${emulator.webhookSecret}`);
  }
  console.log(lines.join("\n"));
  const stop = () => {
    emulators.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
