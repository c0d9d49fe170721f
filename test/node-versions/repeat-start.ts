/**
 * Starts a real gateway (`bin/gateway.js serve` on a sqlite store, with a config) N times in a
 * row under the running Node and fails on the first start that does not reach "listening",
 * answer a webhook and exit 0 on SIGTERM, or that prints a native assertion. The proof for the
 * Node 24 crash at start (`Assertion failed: (env) != nullptr` from better-sqlite3's
 * `Statement::~Statement()`, fixed in adapters/store/sqlite/sqlite-writer-thread.js); `.ci/run`
 * runs it on Node 24 (and 22).
 *
 *   node --import tsx test/node-versions/repeat-start.ts [times=20]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { fanoutConfig } from "../delivery/helpers/process-fixtures.ts";
import { startWebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const times = Number(process.argv[2] ?? 20);
const started = Date.now();
// Two http destinations, as in the fan-out suite where the crash was seen: the engine, the
// outbox and the writer thread all prepare statements at start.
const receiver = await startWebhookReceiver();
const whsec = makeWhsecSecret();
try {
  await startRepeatedly();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  // The receiver's server would keep the process (and CI) waiting.
  await receiver.close();
}
if (process.exitCode !== 1) {
  console.log(
    `${times} starts on Node ${process.version} without a native crash (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}
process.exit();

async function startRepeatedly() {
  for (let i = 1; i <= times; i++) {
    const secrets = makeSecrets();
    const dataDir = await mkdtemp(join(tmpdir(), "gw-repeat-"));
    const config = fanoutConfig(dataDir, secrets.adminKey, [
      { id: "a", url: receiver.url },
      { id: "b", url: receiver.url },
    ]);
    const gateway = await startGatewayProcess({ dataDir, secrets, config, env: { TEST_WHSEC: whsec } });
    try {
      const before = receiver.requests.length;
      for (let n = 0; n < 10; n++) {
        const response = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign));
        if (response.status !== 202) throw new Error(`start ${i}: a webhook answered ${response.status}`);
      }
      await waitFor(`start ${i}: 20 deliveries`, () => receiver.requests.length >= before + 20, 60_000);
      const code = await gateway.kill("SIGTERM");
      const native = gateway.lines.filter((line) => /Assertion failed|Segmentation|FATAL ERROR|Aborted/.test(line));
      if (code !== 0 || native.length > 0) {
        throw new Error(`start ${i}: exit ${code}\n${gateway.lines.join("\n")}`);
      }
    } finally {
      await gateway.kill("SIGKILL");
      await rm(gateway.dataDir, { recursive: true, force: true });
    }
  }
}
