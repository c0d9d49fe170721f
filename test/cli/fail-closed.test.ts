/**
 * Issue 29 row 1, every way to start `gateway serve` other than zero-config, each with a secret
 * variable missing (unset or empty): start-up stops with the line naming the variable and the
 * field that references it, exit 1, no stack trace, nothing listening on the port (nor on the
 * emulators' port after it), nothing generated (no `.data/`, no store directory, no development
 * secrets), no "DEVELOPMENT ONLY" and no "listening" line. Run as typed, as an operator would:
 * a config file as the docs show it, `node bin/gateway.js serve ...` in a fresh directory.
 */
import { existsSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closedPort, closedPortPair, gateway, STACK_LINE, scratchDir } from "./cli-fixtures.ts";
import { isListening, productionConfig, productionEnv, writeConfig } from "./operator-fixtures.ts";

interface Case {
  name: string;
  /** Variables changed from the production environment (undefined: unset). */
  env: Record<string, string | undefined>;
  /** How the config is given: a JSON file, a TypeScript module, or none (the default config). */
  config: "json" | "ts" | "json-default-store" | "none";
  /** Extra arguments after `serve`. */
  args?: (port: number) => string[];
  /** The lines stderr must hold (each a whole problem). */
  lines: string[];
}

const without = (env: Record<string, string>, changes: Record<string, string | undefined>) => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...env, ...changes })) if (value !== undefined) out[name] = value;
  return out;
};

const cases: Case[] = [
  {
    name: "serve --config gateway.json, ESIGN_WEBHOOK_SECRET unset, no store.dir (the shared .data)",
    config: "json-default-store",
    env: { ESIGN_WEBHOOK_SECRET: undefined },
    lines: ["invalid configuration: sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is not set"],
  },
  {
    name: 'serve --config gateway.json, STAFFING_WEBHOOK_SECRET=""',
    config: "json",
    env: { STAFFING_WEBHOOK_SECRET: "" },
    lines: ["invalid configuration: sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is empty"],
  },
  {
    name: "serve --config gateway.json, GATEWAY_ADMIN_KEY_HASH unset",
    config: "json",
    env: { GATEWAY_ADMIN_KEY_HASH: undefined },
    lines: ["invalid configuration: admin.apiKeyHashes.0: environment variable GATEWAY_ADMIN_KEY_HASH is not set"],
  },
  {
    name: "serve --config gateway.json --host 127.0.0.1 --port N, a destination's secret unset",
    config: "json",
    env: { CRM_WHSEC: undefined },
    args: (port) => ["--host", "127.0.0.1", "--port", String(port)],
    lines: ["invalid configuration: destinations.0.secrets.0: environment variable CRM_WHSEC is not set"],
  },
  {
    name: "serve --config gateway.config.ts, ESIGN_WEBHOOK_SECRET unset",
    config: "ts",
    env: { ESIGN_WEBHOOK_SECRET: undefined },
    lines: ["invalid configuration: sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is not set"],
  },
  {
    name: "serve (default config) with the webhook secrets set and GATEWAY_ADMIN_KEY_HASH unset",
    config: "none",
    env: { GATEWAY_ADMIN_KEY_HASH: undefined },
    lines: [
      "  - admin.apiKeyHashes.0: environment variable GATEWAY_ADMIN_KEY_HASH is not set",
      "  - clients.0.apiKeyHashes.0: environment variable GATEWAY_ADMIN_KEY_HASH is not set",
    ],
  },
  {
    name: 'serve (default config) with only ESIGN_WEBHOOK_SECRET="" set',
    config: "none",
    env: { ESIGN_WEBHOOK_SECRET: "", STAFFING_WEBHOOK_SECRET: undefined, GATEWAY_ADMIN_KEY_HASH: undefined },
    lines: [
      "  - sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is empty",
      "  - sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is not set",
      "  - admin.apiKeyHashes.0: environment variable GATEWAY_ADMIN_KEY_HASH is not set",
    ],
  },
  {
    name: "serve (no --config) with GATEWAY_CONFIG set",
    config: "none",
    env: {
      ESIGN_WEBHOOK_SECRET: undefined,
      STAFFING_WEBHOOK_SECRET: undefined,
      GATEWAY_ADMIN_KEY_HASH: undefined,
      GATEWAY_CONFIG: '{"sources":[]}',
    },
    lines: ["gateway serve: GATEWAY_CONFIG is set, but on Node the configuration is a file"],
  },
];

describe("serve fails closed on a missing secret, every way but zero-config", () => {
  it.each(cases)("$name", { timeout: 240_000 }, async (c) => {
    const dir = await scratchDir();
    // Without --config the emulators take port + 1 (checked free too, outside the kernel's range).
    const port = c.config === "none" ? await closedPortPair() : await closedPort();
    const args = ["serve"];
    if (c.config === "json" || c.config === "json-default-store") {
      const config: Record<string, unknown> = productionConfig(port);
      if (c.config === "json-default-store") delete config.store;
      args.push("--config", await writeConfig(dir, config));
    } else if (c.config === "ts") {
      // Saved in a project of ES modules, as at the repository's root (docs/configuration.md).
      await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
      await writeFile(join(dir, "gateway.config.ts"), `export default ${JSON.stringify(productionConfig(port))};\n`);
      args.push("--config", "gateway.config.ts");
    }
    args.push(...(c.args?.(port) ?? (c.config === "none" ? ["--port", String(port)] : [])));
    const run = await gateway(args, { cwd: dir, env: without(productionEnv(), c.env) });

    // Each assertion shows what the child printed when it fails (the CI flake gave no clue).
    const printed = `stderr: ${JSON.stringify(run.stderr)}\nstdout: ${JSON.stringify(run.stdout.slice(0, 2000))}`;
    expect(run.code, printed).toBe(1);
    expect(run.stderr, printed).not.toMatch(STACK_LINE);
    const stderr = run.stderr.trimEnd().split("\n");
    for (const line of c.lines)
      expect(
        stderr.some((l) => l.startsWith(line)),
        `${line}\n${printed}`,
      ).toBe(true);
    if (c.lines.length === 1) expect(stderr, printed).toHaveLength(1);
    expect(run.stdout).not.toContain("DEVELOPMENT ONLY");
    expect(run.stdout).not.toContain('"msg":"listening"');
    // Nothing listening (the gateway's port, and the emulators' after it), nothing generated.
    expect(await isListening(port)).toBe(false);
    if (c.config === "none") expect(await isListening(port + 1)).toBe(false);
    expect(existsSync(join(dir, ".data"))).toBe(false);
    expect(existsSync(join(dir, "store"))).toBe(false);
  });

  it("the boundary: zero-config (no --config, no GATEWAY_CONFIG, no secret variable) still generates and serves them", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    const port = await closedPortPair();
    const { spawn } = await import("node:child_process");
    const { BIN, cleanEnv } = await import("./cli-fixtures.ts");
    const child = spawn(process.execPath, [BIN, "serve", "--port", String(port)], {
      cwd: dir,
      env: cleanEnv({ GATEWAY_EMULATORS: "off" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk) => {
          out += chunk;
          if (out.includes("console: ")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      expect(out).toContain("DEVELOPMENT ONLY");
      expect(existsSync(join(dir, ".data", "dev-secrets.json"))).toBe(true);
      // Only this user may read them (issue 29 row 8): the directory 0700, the secrets 0600.
      expect((statSync(join(dir, ".data")).mode & 0o777).toString(8)).toBe("700");
      expect((statSync(join(dir, ".data", "dev-secrets.json")).mode & 0o777).toString(8)).toBe("600");
      expect((await fetch(`http://127.0.0.1:${port}/console/dev-key`)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
});
