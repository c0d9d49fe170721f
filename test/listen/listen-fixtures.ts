/**
 * Fixtures of the `gateway listen` tests: a gateway process whose every event goes to the live
 * stream (the admin key may subscribe and read the log, as in the default config), a listener
 * process (`bin/gateway.js listen`) whose printed lines are collected, and a free loopback port
 * for a local app that is not up yet.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { defaultTestConfig } from "../helpers/gateway-process.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;

/** Default test config plus the live stream, and `extra` merged in. */
export function liveConfig(dataDir: string, adminKey: string, extra: Record<string, unknown> = {}) {
  const hash = adminKeyHash(adminKey);
  return {
    ...defaultTestConfig(dataDir, hash),
    destinations: [{ id: "live", type: "stream" }],
    routes: [{ destinations: ["live"] }],
    clients: [{ id: "admin", apiKeyHashes: [hash], scopes: { stream: {} } }],
    ...extra,
  };
}

export interface ListenerProcess {
  child: ChildProcess;
  lines: string[];
  /** The signing secret it printed. */
  secret: string;
  /** Lines that report an event as delivered (status 2xx). */
  delivered(): string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `gateway listen` and resolves once it printed its secret and connected; `spawnOptions`
 * give it a working directory (its default credential and state are relative to it) and environment.
 */
export async function startListener(
  args: string[],
  spawnOptions: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ListenerProcess> {
  const child = spawn(process.execPath, [BIN, "listen", ...args], {
    ...spawnOptions,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const secret = await new Promise<string>((resolve, reject) => {
    let found: string | undefined;
    const onLine = (line: string) => {
      lines.push(line);
      found ??= /signing secret: (\S+)/.exec(line)?.[1];
      if (found && line.startsWith("# connected")) resolve(found);
    };
    createInterface({ input: child.stdout! }).on("line", onLine);
    createInterface({ input: child.stderr! }).on("line", onLine);
    exited.then(() => reject(new Error(`listener exited before connecting:\n${lines.join("\n")}`)));
  });
  return {
    child,
    lines,
    secret,
    delivered: () => lines.filter((line) => /^\S+ {2}\S+ {2}\S+ {2}2\d\d {2}\d+ ms$/.test(line)),
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}

/** A loopback port that was free a moment ago (for an app that starts later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A fresh temp directory. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}
