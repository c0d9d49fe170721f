/**
 * Runs the e-sign fake as a process of its own (benchmarks: the fake must not share a CPU with
 * the load generator). Prints one JSON line `{"fake": {...}}` with its base URL, credentials, a
 * seeded agreement id and an access token for direct calls; limits are raised for load.
 * Started with `node --import tsx test/fakes/esign-fake-process.ts`.
 */
import { startEsignFake } from "./esign-fake.ts";

const fake = await startEsignFake({
  generalLimitPerClient: Number.MAX_SAFE_INTEGER,
  tokenLimitPerClient: 1_000,
  tokenLimitPerIp: 1_000,
});
const agreementId = fake.createAgreement("Benchmark agreement");
const answer = await fetch(`${fake.baseUrl}/oauth/access-token`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ client_id: fake.client.clientId, client_secret: fake.client.clientSecret }),
});
const { access_token: accessToken } = (await answer.json()) as { access_token: string };
// Forget the request log: under load it would only grow.
fake.seen.length = 0;
setInterval(() => {
  fake.seen.length = 0;
}, 1_000).unref();
console.log(
  JSON.stringify({
    fake: {
      url: fake.url,
      baseUrl: fake.baseUrl,
      clientId: fake.client.clientId,
      clientSecret: fake.client.clientSecret,
      agreementId,
      accessToken,
    },
  }),
);
process.on("SIGTERM", () => {
  fake.close().then(() => process.exit(0));
});
