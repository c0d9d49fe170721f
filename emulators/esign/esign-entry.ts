/**
 * The e-sign emulator as the serving code sees it (emulators/shared/emulator-contract.ts): its
 * webhooks signed with the gateway source's secret and registered for every event, and the
 * `ESIGN_*` variables config/default.ts reads for the `esign` upstream.
 */
import type { EmulatorEntry } from "../shared/emulator-contract.ts";
import { createEsignEmulator } from "./esign-emulator.ts";

export const esignEmulatorEntry: EmulatorEntry = {
  upstreamUrlEnv: "ESIGN_API_URL",
  webhookSecretEnv: "ESIGN_WEBHOOK_SECRET",
  create({ mountPath, timeScale, autoRun, webhookSecret }) {
    const emulator = createEsignEmulator({ mountPath, timeScale, autoRun, signingSecret: webhookSecret });
    return {
      app: emulator.app,
      apiPath: emulator.apiPath,
      controlPath: emulator.controlPath,
      webhookSecret: emulator.signingSecret,
      upstreamEnv: (apiUrl) => ({
        ESIGN_API_URL: apiUrl,
        ESIGN_CLIENT_ID: emulator.client.clientId,
        ESIGN_CLIENT_SECRET: emulator.client.clientSecret,
      }),
      controlCredentials: () => [emulator.client.clientSecret, emulator.signingSecret],
      targetWebhooks: (url) => emulator.registerWebhook(url, emulator.signingSecret),
      close: () => emulator.close(),
    };
  },
};
