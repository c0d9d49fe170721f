/**
 * The staffing emulator as the serving code sees it (emulators/shared/emulator-contract.ts): the
 * organization's webhook secret is the gateway source's, requests without `webhookUrl` report to
 * the gateway, and the `STAFFING_*` variables config/default.ts reads for the `staffing` upstream.
 */
import type { EmulatorEntry } from "../shared/emulator-contract.ts";
import { createStaffingEmulator } from "./staffing-emulator.ts";

export const staffingEmulatorEntry: EmulatorEntry = {
  upstreamUrlEnv: "STAFFING_API_URL",
  webhookSecretEnv: "STAFFING_WEBHOOK_SECRET",
  create({ mountPath, timeScale, autoRun, webhookSecret }) {
    const emulator = createStaffingEmulator({ mountPath, timeScale, autoRun, webhookSecret });
    return {
      app: emulator.app,
      apiPath: emulator.apiPath,
      controlPath: emulator.controlPath,
      webhookSecret: emulator.webhookSecret,
      upstreamEnv: (apiUrl) => ({ STAFFING_API_URL: apiUrl, STAFFING_API_KEY: emulator.apiKey }),
      controlCredentials: () => [emulator.apiKey, emulator.webhookSecret],
      targetWebhooks: (url) => emulator.setDefaultWebhookUrl(url),
      close: () => emulator.close(),
    };
  },
};
