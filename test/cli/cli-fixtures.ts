/**
 * Runs the CLI as a user types it (`node bin/gateway.js ...`) in a scratch directory with an
 * environment that configures nothing (no ESIGN_/STAFFING_/GATEWAY_ variables), and collects its
 * exit code and output. Also: loopback ports held busy, for the "port in use" failures.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

export const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
export const ROOT = new URL("../..", import.meta.url).pathname;
const CONFIGURING = /^(ESIGN_|STAFFING_|GATEWAY_)/;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a fresh shell that sets none of the gateway's variables, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONFIGURING.test(name)));
  return { ...base, ...extra };
}

/** Runs `node <script> ...args` to completion (bounded), `input` piped to stdin. */
export function runNode(
  script: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, script, {
    cwd: options.cwd ?? ROOT,
    env: cleanEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const run = collectRun(child, script.join(" "));
  child.stdin.end(options.input ?? "");
  return run;
}

/**
 * A spawned command's exit code and output once it exits, bounded: killed and rejected after
 * 150 s (generous: a start on a loaded machine, eight suites on two cores, takes long).
 */
export function collectRun(
  child: ChildProcessByStdio<Writable | null, Readable, Readable>,
  label: string,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out: ${label}\n${stdout}\n${stderr}`));
    }, 150_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Let the pipes drain before resolving.
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

/** `gateway ...args` as typed. */
export function gateway(args: string[], options: Parameters<typeof runNode>[1] = {}): Promise<CliRun> {
  return runNode([BIN, ...args], options);
}

/** A fresh scratch directory (a "fresh clone" working directory without `.data`). */
export function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "gw-cli-"));
}

/** A node stack trace line (`    at fn (file:1:2)`). */
export const STACK_LINE = /^\s+at .+[:(]/m;

/** Holds `port` (0: any) on 127.0.0.1 busy; resolves with the server, or undefined if taken. */
export function holdPort(port = 0): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(undefined));
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => resolve(server));
  });
}

export function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}

export function release(server: Server | undefined): Promise<void> {
  return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

/** A loopback port nothing listens on (was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = (await holdPort()) as Server;
  const port = portOf(server);
  await release(server);
  return port;
}
