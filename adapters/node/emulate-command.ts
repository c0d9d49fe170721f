/**
 * `gateway emulate [--host 127.0.0.1] [--port 8788] [--time-scale 1] [--only esign|staffing]`:
 * runs the upstream emulators alone (README, Sandbox), prints where they listen and the sandbox
 * credentials to configure a gateway or an app with, and stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
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
  if (values.only && values.only !== "esign" && values.only !== "staffing")
    throw new Error("--only: esign or staffing");
  const emulators = await startEmulators({
    host: values.host,
    port,
    timeScale,
    esign: values.only === "staffing" ? false : {},
    staffing: values.only === "esign" ? false : {},
  });
  console.log(describeEmulators(emulators));
  // Printed on purpose: credentials of an in-memory emulator, worthless anywhere else.
  const lines = ["SANDBOX credentials (emulated services only):"];
  if (emulators.esign) {
    lines.push(
      `  ESIGN_API_URL=${emulators.esignBaseUrl}`,
      `  ESIGN_CLIENT_ID=${emulators.esign.client.clientId}`,
      `  ESIGN_CLIENT_SECRET=${emulators.esign.client.clientSecret}`,
      `  e-sign webhook signing key (per-agreement webhook_url): ${emulators.esign.signingSecret}`,
    );
  }
  if (emulators.staffing) {
    lines.push(
      `  STAFFING_API_URL=${emulators.staffingBaseUrl}`,
      `  STAFFING_API_KEY=${emulators.staffing.apiKey}`,
      `  staffing webhook secret: ${emulators.staffing.webhookSecret}`,
    );
  }
  console.log(lines.join("\n"));
  const stop = () => {
    emulators.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
