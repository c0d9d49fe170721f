/**
 * `gateway transform test` as typed, against a real gateway process and its
 * `POST /transforms/test`: a module file's payload, a built-in's message, a failing module's
 * error with its console lines (exit code 1), a destination's configured transform, and the
 * endpoint's refusals (no key, unknown event, two transforms at once).
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const adminKey = `admin_transform_cli_${Date.now()}`;
let gateway: GatewayProcess;
let eventId: string;
let dir: string;

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "transform", "test", ...args], {
      env: { ...process.env, GATEWAY_API_KEY: adminKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    // "close": after the child's output has all been read ("exit" may come before it).
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const testTransform = (body: unknown, key = adminKey) =>
  fetch(`${gateway.url}/transforms/test`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gw-transform-cli-"));
  const dataDir = await makeDataDir();
  const config = fanoutConfig(dataDir, adminKey, [
    // Never reached (no route sends to it); only its configured transform is used.
    { id: "chat", url: "http://127.0.0.1:9/hook", transform: { builtin: "discord" } },
  ]);
  Object.assign(config, { routes: [] });
  gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    env: { TEST_WHSEC: makeWhsecSecret() },
    config,
  });
  const delivery = await esignDelivery(gateway.secrets.esign, "agreement.completed", { subjectId: "agr-cli" });
  const response = await postWebhook(gateway.url, "esign", delivery);
  eventId = ((await response.json()) as { id: string }).id;
});

afterAll(async () => {
  await gateway?.kill();
});

describe("gateway transform test", () => {
  it("prints a module file's payload", async () => {
    const file = join(dir, "pick.js");
    await writeFile(
      file,
      "export default (event) => { console.log('picking'); return { type: event.type, id: event.id }; };",
    );
    const { code, stdout } = await runCli([file, "--event", eventId, "--url", gateway.url]);
    expect(code).toBe(0);
    expect(stdout).toBe(`log: picking\n${JSON.stringify({ type: "agreement.completed", id: eventId }, null, 2)}\n`);
  }, 120_000);

  it("prints a built-in's message", async () => {
    const { code, stdout } = await runCli(["slack", "--event", eventId, "--url", gateway.url]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).text).toBe("Agreement completed: crm-deal-4711");
  }, 120_000);

  it("prints a failure with the transform's logs and exits 1", async () => {
    const file = join(dir, "broken.js");
    await writeFile(file, "export default (event) => { console.log('saw', event.type); return event.nope.deeper; };");
    const { code, stdout } = await runCli([file, "--event", eventId, "--url", gateway.url]);
    expect(code).toBe(1);
    expect(stdout).toBe(
      "log: saw agreement.completed\ntransform_error: TypeError: cannot read property 'deeper' of undefined\n",
    );
  }, 120_000);

  /** Saves `lines` as module `name` and runs `gateway transform test` on it with `--timeout` (100 ms). */
  const tryModule = async (name: string, lines: string[], timeout = 100) => {
    const file = join(dir, name);
    await writeFile(file, lines.join("\n"));
    return runCli([file, "--event", eventId, "--url", gateway.url, "--timeout", String(timeout)]);
  };
  const SLOW_START = (ms: number) => `const until = Date.now() + ${ms}; while (Date.now() < until) {}`;

  it("--timeout counts the module's top level with the program: a 400 ms top level, --timeout 100, fails there", async () => {
    // The top level runs before every call: it is part of the call's budget, not a free start-up.
    const run = await tryModule("slow-start.js", [
      SLOW_START(400),
      "export default (event) => ({ type: event.type });",
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toBe("transform_error: the transform module's top level ran longer than 100 ms\n");
  }, 120_000);

  it("an endless program ends at --timeout; an endless top level at --timeout too (50 ms), named for it", async () => {
    const program = await tryModule("endless-program.js", [
      "const TABLE = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => ['k' + i, i]));",
      "export default () => { for (;;) {} };",
    ]);
    expect(program.code).toBe(1);
    expect(program.stdout).toBe("transform_error: the transform ran longer than 100 ms\n");
    const topLevel = await tryModule(
      "endless-start.js",
      ["for (;;) {}", "export default () => ({ never: true });"],
      50,
    );
    expect(topLevel.code).toBe(1);
    expect(topLevel.stdout).toBe("transform_error: the transform module's top level ran longer than 50 ms\n");
    // The gateway carries on: the next call answers.
    expect((await runCli(["slack", "--event", eventId, "--url", gateway.url])).code).toBe(0);
  }, 120_000);

  it("a top level stuck inside one built-in (no interrupt reaches it) is ended from outside at --timeout + slack", async () => {
    // Minutes of one indexOf: only the pool's outside deadline (50 ms + the 100 ms slack) ends it.
    const run = await tryModule(
      "stuck-start.js",
      ["const i = 'a'.repeat(1e6).indexOf('a'.repeat(5e5) + 'b');", "export default () => ({ i });"],
      50,
    );
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toBe("transform_error: the transform module's top level ran longer than 50 ms\n");
    // Its worker was replaced: the next call answers.
    expect((await runCli(["slack", "--event", eventId, "--url", gateway.url])).code).toBe(0);
  }, 120_000);

  it("runs a destination's configured transform through the API", async () => {
    const response = await testTransform({ event: eventId, destination: "chat" });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { ok: boolean; result: { embeds: { title: string }[] }; version: string };
    expect(answer.ok).toBe(true);
    expect(answer.result.embeds[0]?.title).toBe("Agreement completed: crm-deal-4711");
    expect(answer.version).toMatch(/^sha256:[0-9a-f]{16}$/);
  }, 120_000);

  it("refuses a missing key, an unknown event and two transforms at once", async () => {
    expect((await testTransform({ event: eventId, builtin: "slack" }, "wrong")).status).toBe(401);
    const unknown = await testTransform({ event: "evt_missing", builtin: "slack" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const both = await testTransform({ event: eventId, builtin: "slack", destination: "chat" });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
  }, 120_000);
});
