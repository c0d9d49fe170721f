/**
 * The filter language where users type it: a config file with a bad route filter stops
 * `gateway serve` at start-up naming the exact path; `gateway listen --filter` forwards only the
 * matching events of both services to a real local app, and refuses a bad filter before connecting.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { liveConfig, startListener, tempDir } from "../listen/listen-fixtures.ts";

/** A sample webhook body being edited before signing (fields of both services). */
type SampleBody = Record<string, unknown> & { result?: object; participants?: { email?: string }[] };

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("gateway serve with a bad route filter", () => {
  it("stops at start-up and names routes.N.filter... and what was expected", async () => {
    const dir = await tempDir("gw-filter-config-");
    const config = {
      server: { host: "127.0.0.1", port: 0 },
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] }],
      destinations: [{ id: "live", type: "stream" }],
      routes: [
        { destinations: ["live"] },
        { filters: [{ prefix: { type: "agreement." } }], destinations: ["live"] },
        { filter: { data: { status: "completed" } }, destinations: ["live"] },
        { filter: { data: { amount: { $gtx: 100 } } }, destinations: ["live"] },
      ],
    };
    const path = join(dir, "gateway.json");
    await writeFile(path, JSON.stringify(config));
    const { code, output } = await run(["serve", "--config", path], { TEST_ESIGN_SECRET: "esign-secret-0123456789" });
    expect(code).toBe(1);
    expect(output).toMatch(
      /routes\.3\.filter\.data\.amount\.\$gtx: expected a known operator \(.*\); unknown operator \$gtx/,
    );
    expect(output).not.toContain("listening");
  });
});

describe("gateway listen --filter", () => {
  it("forwards only matching events of both services", async () => {
    const secrets = makeSecrets();
    const dataDir = await tempDir("gw-filter-listen-");
    const gateway = await startGatewayProcess({ secrets, dataDir, config: liveConfig(dataDir, secrets.adminKey) });
    cleanups.push(() => gateway.kill());
    const app = await startWebhookReceiver();
    cleanups.push(() => app.close());
    const filter = { $or: [{ data: { result: { requiresReview: true } } }, { type: "agreement.declined" }] };
    const listener = await startListener([
      gateway.url,
      "--forward-to",
      app.url,
      "--key",
      secrets.adminKey,
      "--state",
      join(dataDir, "listen.json"),
      "--filter",
      JSON.stringify(filter),
    ]);
    cleanups.push(() => listener.kill());

    const post = async (source: string, delivery: Awaited<ReturnType<typeof esignDelivery>>) => {
      const response = await postWebhook(gateway.url, source, delivery);
      return ((await response.json()) as { id: string }).id;
    };
    const review = (value: boolean) => (body: SampleBody) => {
      body.result = { ...body.result, requiresReview: value };
    };
    await post("staffing", await staffingDelivery(secrets.staffing, "candidate.accepted", { edit: review(false) }));
    const reviewed = await post(
      "staffing",
      await staffingDelivery(secrets.staffing, "candidate.accepted", { edit: review(true) }),
    );
    await post("esign", await esignDelivery(secrets.esign, "agreement.completed"));
    const declined = await post("esign", await esignDelivery(secrets.esign, "agreement.declined"));

    // The stream is in journal order: once the last matching event arrived, every earlier one did.
    await waitFor("the declined event", () => app.ids().includes(declined));
    expect(app.requests.map((r) => r.headers["webhook-id"])).toEqual([reviewed, declined]);
  });

  it("refuses a bad filter before connecting, naming the bad part", async () => {
    const { code, output } = await run([
      "listen",
      "http://127.0.0.1:9",
      "--forward-to",
      "http://127.0.0.1:9/hook",
      "--key",
      "k",
      "--filter",
      '{"data":{"amount":{"$gt":true}}}',
    ]);
    expect(code).toBe(64);
    expect(output).toContain("--filter: filter.data.amount.$gt: expected a number or a string");
  });
});
