/**
 * Starts a real gateway process (`bin/gateway.js serve`) on a random loopback port with a config
 * written to a temp dir, and waits for its "listening" line. Used by every end-to-end test.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { adminKeyHash } from "./signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;

export interface GatewayProcessOptions {
  /** Config object written as JSON; defaults to both sources on a disk store in a temp dir. */
  config?: Record<string, unknown>;
  /** Extra environment (secrets referenced by the config). */
  env?: Record<string, string>;
  /** Reuse a data directory (restart tests). */
  dataDir?: string;
  /** Shell commands run before the gateway replaces the shell (`ulimit -n 4096`, `trap '' XFSZ`). */
  shellPrefix?: string;
  /** Another checkout's `bin/gateway.js` (the upgrade fixtures are written by an older release). */
  bin?: string;
}

export interface GatewayProcess {
  url: string;
  dataDir: string;
  /** The config file the gateway was started with (rewrite it and send SIGHUP to reload). */
  configPath: string;
  child: ChildProcess;
  /** Every stdout/stderr line so far. */
  lines: string[];
  secrets: { esign: string; staffing: string; adminKey: string };
  /** Sends a signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Test secrets, fresh per call. */
export function makeSecrets() {
  return {
    esign: `whsec_esign_${randomBytes(16).toString("hex")}`,
    staffing: `whsec_staffing_${randomBytes(16).toString("hex")}`,
    adminKey: `admin_${randomBytes(16).toString("hex")}`,
  };
}

export function defaultTestConfig(dataDir: string, adminKeyHash: string) {
  return {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "disk", dir: dataDir },
    sources: [
      { id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${TEST_STAFFING_SECRET}"] },
    ],
    admin: { apiKeyHashes: [adminKeyHash] },
    // The suites send many forged deliveries from one address on purpose; the limiter that
    // would answer them 429 has its own tests (test/security/webhook-hostile-traffic.test.ts).
    ingress: { failedVerificationLimit: { maxFailures: 0 } },
    log: { level: "warn" },
  };
}

/**
 * Every gateway process this test process started and that has not exited yet. They are killed
 * when the test process exits, so a test that never reaches its `kill()` (a `beforeAll` that timed
 * out before it got the handle, a worker torn down mid-file) leaves no gateway running behind it.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Starts the gateway and resolves once it listens. */
export async function startGatewayProcess(
  options: GatewayProcessOptions & { secrets?: GatewayProcess["secrets"] } = {},
): Promise<GatewayProcess> {
  const secrets = options.secrets ?? makeSecrets();
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "gw-data-")));
  const adminHash = adminKeyHash(secrets.adminKey);
  const config = options.config ?? defaultTestConfig(dataDir, adminHash);
  const configPath = join(await mkdtemp(join(tmpdir(), "gw-config-")), "gateway.json");
  await writeFile(configPath, JSON.stringify(config));
  const args = [options.bin ?? BIN, "serve", "--config", configPath, "--port", "0"];
  const [command, argv] = options.shellPrefix
    ? ["bash", ["-c", `${options.shellPrefix}\nexec "$0" "$@"`, process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(command, argv as string[], {
    env: {
      ...process.env,
      TEST_ESIGN_SECRET: secrets.esign,
      TEST_STAFFING_SECRET: secrets.staffing,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      lines.push(line);
      if (line.includes('"msg":"listening"')) resolve(JSON.parse(line).url);
    };
    createInterface({ input: child.stdout! }).on("line", onLine);
    createInterface({ input: child.stderr! }).on("line", onLine);
    exited.then((code) => reject(new Error(`gateway exited (${code}) before listening:\n${lines.join("\n")}`)));
  });
  return {
    url,
    dataDir,
    configPath,
    child,
    lines,
    secrets,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** One JSON log line of a gateway: its level and message, and the fields the line carries. */
export interface GatewayLogLine {
  level: string;
  msg: string;
  destination?: string;
  /** The fields of the lines an operator alerts on (docs/operations-and-metrics.md). */
  status?: number;
  error?: string;
  suppressed?: number;
  hint?: string;
  host?: string;
  reason?: string;
  [field: string]: unknown;
}

/** The JSON log lines among a gateway's output lines (other lines, e.g. a banner, are skipped). */
export function logLinesOf(lines: readonly string[]): GatewayLogLine[] {
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as GatewayLogLine];
    } catch {
      return [];
    }
  });
}

/** The log lines with message `msg` (and of `destination`, when given). */
export function logLinesWith(lines: readonly string[], msg: string, destination?: string): GatewayLogLine[] {
  return logLinesOf(lines).filter((l) => l.msg === msg && (destination === undefined || l.destination === destination));
}
