/**
 * `gateway emulate [--host 127.0.0.1] [--port 8788] [--time-scale 1] [--only <service>]`: runs
 * the upstream emulators of emulators/registry.ts alone (docs/sandbox-and-emulators.md), prints
 * where they
 * listen and the sandbox credentials to configure a gateway or an app with, and stops on
 * SIGINT/SIGTERM.
 */
import { defineCommand } from "citty";
import { UsageError } from "./cli-errors.ts";
import { exitAfterOutput } from "./exit-after-output.ts";
import { explainListenError } from "./port-in-use.ts";

/** The emulators (their servers, h3) load when the command runs or its usage lists them, not with the CLI. */
const loadRegistry = () => import("../../emulators/registry.ts").then((m) => m.emulatorRegistry);

export const emulateCommand = defineCommand({
  meta: { name: "emulate", description: "Run the upstream emulators alone (sandbox credentials printed)" },
  args: async () => ({
    host: { type: "string", valueHint: "host", default: "127.0.0.1", description: "Listen address" },
    port: { type: "string", valueHint: "port", default: "8788", description: "Listen port (0: any)" },
    "time-scale": {
      type: "string",
      valueHint: "factor",
      default: "1",
      description: "Multiplier of simulated delays (0 < factor <= 100)",
    },
    only: { type: "string", valueHint: [...(await loadRegistry()).keys()].join("|"), description: "Run one emulator" },
  }),
  async run({ args }) {
    const port = Number(args.port);
    const timeScale = Number(args["time-scale"]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port: an integer 0..65535");
    if (!(timeScale > 0 && timeScale <= 100)) throw new UsageError("--time-scale: a number above 0, at most 100");
    const names = [...(await loadRegistry()).keys()];
    if (args.only !== undefined && !names.includes(args.only))
      throw new UsageError(`--only: one of ${names.join(", ")}`);
    const { startEmulators } = await import("./start-emulators.ts");
    const { describeEmulators } = await import("./sandbox.ts");
    const emulators = await startEmulators({
      host: args.host,
      port,
      timeScale,
      only: args.only === undefined ? undefined : { [args.only]: {} },
    }).catch((error: unknown) => explainListenError(error, "emulators", args.host, port));
    console.log(describeEmulators(emulators));
    // Printed on purpose: credentials of an in-memory emulator, worthless anywhere else.
    const lines = ["SANDBOX credentials (emulated services only):"];
    for (const { name, emulator, apiUrl } of emulators.served) {
      for (const [variable, value] of Object.entries(emulator.upstreamEnv(apiUrl)))
        lines.push(`  ${variable}=${value}`);
      lines.push(`  ${name} webhook signing secret: ${emulator.webhookSecret}`);
    }
    console.log(lines.join("\n"));
    const stop = () => {
      emulators.close().then(() => exitAfterOutput(0));
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  },
});
