/**
 * Issue 29 row 5: `gateway validate --config FILE` checks what `serve` checks before it listens
 * (schema, `${VAR}` resolution, cross-references, transform modules, filters, store.dir) without
 * opening the store or a port: exit 0 with the warnings printed, or exit 1 with every problem
 * named by its field path. `--workers` checks the file as the Worker's GATEWAY_CONFIG binding.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closedPort, gateway, STACK_LINE, scratchDir } from "./cli-fixtures.ts";
import { isListening, productionConfig, productionEnv, writeConfig } from "./operator-fixtures.ts";

describe("gateway validate", () => {
  it("a valid production config: exit 0, the summary, warnings printed; no store, no port", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    const port = await closedPort();
    const config = productionConfig(port);
    // A destination no route names: valid, but worth a warning.
    config.destinations.push({ id: "unused", type: "stream" } as never);
    await writeConfig(dir, config);
    const run = await gateway(["validate", "--config", "gateway.json"], { cwd: dir, env: productionEnv() });
    expect(run.stderr).toContain('warning: destinations.2: no route names "unused", so it receives nothing');
    expect(run.stdout).toBe("gateway.json: valid (2 sources, 3 destinations, 1 routes, 1 warnings)\n");
    expect(run.code).toBe(0);
    expect(existsSync(join(dir, "store"))).toBe(false);
    expect(existsSync(join(dir, ".data"))).toBe(false);
    expect(await isListening(port)).toBe(false);
  });

  it("every problem by its field path, exit 1", { timeout: 240_000 }, async () => {
    const dir = await scratchDir();
    const config = productionConfig(0, "./store") as Record<string, unknown> & {
      destinations: Record<string, unknown>[];
      routes: Record<string, unknown>[];
    };
    config.destinations[0] = {
      ...config.destinations[0],
      transform: { code: "export default function (event) { return event" },
    };
    config.destinations.push({
      id: "slack",
      type: "http",
      url: "${CRM_URL}",
      secrets: ["${CRM_WHSEC}"],
      mode: "cloudevent",
      transform: { file: "missing.js" },
    });
    config.routes.push(
      { destinations: ["crm", "nowhere"] },
      { filter: { data: { amount: { $gtx: 1 } } }, destinations: ["crm"] },
    );
    await writeConfig(dir, config);
    const env = productionEnv();
    delete (env as Record<string, string | undefined>).ESIGN_WEBHOOK_SECRET;
    const run = await gateway(["validate", "--config", "gateway.json"], { cwd: dir, env: { ...env, CRM_WHSEC: "" } });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(STACK_LINE);
    // A file that cannot be read is named first, on its own: the rest waits for it.
    expect(run.stderr.trim()).toBe(
      "invalid configuration: destinations.2.transform.file: cannot read missing.js (ENOENT)",
    );

    await writeFile(join(dir, "missing.js"), "export default (event) => ({ text: event.type });\n");
    const again = await gateway(["validate", "--config", "gateway.json"], { cwd: dir, env: { ...env, CRM_WHSEC: "" } });
    expect(again.code).toBe(1);
    const lines = again.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe("invalid configuration:");
    const problems = lines.slice(1).map((line) => line.replace(/^ {2}- /, "").split(":")[0]);
    expect(problems.sort()).toEqual(
      [
        "sources.0.secrets.0",
        "destinations.0.secrets.0",
        "destinations.2.secrets.0",
        "destinations.0.transform.code",
        "routes.1.destinations.1",
        "routes.2.filter.data.amount.$gtx",
      ].sort(),
    );
    expect(again.stderr).toContain("environment variable ESIGN_WEBHOOK_SECRET is not set");
    expect(again.stderr).toContain("environment variable CRM_WHSEC is empty");
    expect(existsSync(join(dir, "store"))).toBe(false);
  });

  it("store.dir that serve could not use is a problem, found without creating anything", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    await writeFile(join(dir, "store"), "a file\n");
    await writeConfig(dir, productionConfig(0, "./store"));
    const run = await gateway(["validate", "--config", "gateway.json"], { cwd: dir, env: productionEnv() });
    expect(run.stderr.trim()).toBe("invalid configuration: store.dir: ./store is a file, not a directory");
    expect(run.code).toBe(1);
  });

  it("a budget of bodies in flight smaller than a source's body limit is a problem", { timeout: 240_000 }, async () => {
    const dir = await scratchDir();
    const config = productionConfig(0) as ReturnType<typeof productionConfig> & Record<string, unknown>;
    (config.sources[1] as Record<string, unknown>).bodyLimitBytes = 4 * 1024 * 1024;
    config.ingress = { maxBodyBytesInFlight: 2 * 1024 * 1024 };
    await writeConfig(dir, config);
    const run = await gateway(["validate", "--config", "gateway.json"], { cwd: dir, env: productionEnv() });
    expect(run.stderr.trim()).toBe(
      "invalid configuration: ingress.maxBodyBytesInFlight: expected at least every source's bodyLimitBytes " +
        '(source "staffing" takes bodies of up to 4194304 bytes; received 2097152)',
    );
    expect(run.code).toBe(1);
  });

  it("--workers: the file as the Worker's GATEWAY_CONFIG, the environment as its bindings", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    const workersConfig = {
      destinations: [{ id: "q", type: "queue", driver: "cloudflare-queues", binding: "EVENTS" }],
      routes: [{ destinations: ["q", "nope"] }],
    };
    await writeConfig(dir, workersConfig, "gateway-config.json");
    const run = await gateway(["validate", "--workers", "--config", "gateway-config.json"], {
      cwd: dir,
      env: { ESIGN_WEBHOOK_SECRET: "esign_secret_0123456789abcdef" },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("  - sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is not set");
    expect(run.stderr).toContain(
      '  - routes.0.destinations.1: expected the id of a configured destination (no destination "nope")',
    );

    workersConfig.routes = [{ destinations: ["q"] }];
    await writeConfig(dir, workersConfig, "gateway-config.json");
    const ok = await gateway(["validate", "--workers", "--config", "gateway-config.json"], {
      cwd: dir,
      env: {
        ESIGN_WEBHOOK_SECRET: "esign_secret_0123456789abcdef",
        STAFFING_WEBHOOK_SECRET: "staffing_secret_0123456789",
      },
    });
    expect(ok.stdout).toBe("gateway-config.json: valid (2 sources, 1 destinations, 1 routes, 1 warnings)\n");
    expect(ok.stderr).toContain("warning: admin.apiKeyHashes: none");
    expect(ok.code).toBe(0);
  });

  it("--config is required", { timeout: 240_000 }, async () => {
    const run = await gateway(["validate"]);
    expect(run.code).toBe(64);
    expect(run.stderr.split("\n")[0]).toBe("gateway validate: Missing required argument: --config");
  });
});
