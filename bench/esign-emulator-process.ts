/**
 * Runs the e-sign emulator as a process of its own (benchmarks: the upstream must not share a CPU
 * with the load generator). Prints one JSON line `{"fake": {...}}` with its base URL, credentials,
 * a seeded agreement id and an access token for direct calls; limits are raised for load.
 * Started with `node --import tsx bench/esign-emulator-process.ts`.
 */
import { startEsignEmulator } from "../test/helpers/emulators.ts";

const emulator = await startEsignEmulator({
  generalLimitPerClient: Number.MAX_SAFE_INTEGER,
  tokenLimitPerClient: 1_000,
  tokenLimitPerIp: 1_000,
});
const agreementId = await emulator.createAgreement("Benchmark agreement");
const answer = await fetch(`${emulator.baseUrl}/oauth/access-token`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ client_id: emulator.client.clientId, client_secret: emulator.client.clientSecret }),
});
const { access_token: accessToken } = (await answer.json()) as { access_token: string };
console.log(
  JSON.stringify({
    fake: {
      url: emulator.url,
      baseUrl: emulator.baseUrl,
      clientId: emulator.client.clientId,
      clientSecret: emulator.client.clientSecret,
      agreementId,
      accessToken,
    },
  }),
);
process.on("SIGTERM", () => {
  emulator.close().then(() => process.exit(0));
});
