/**
 * Runs the CLI as a user types it (`node bin/gateway.js ...`) in a scratch directory with an
 * environment that configures nothing (no ESIGN_/STAFFING_/GATEWAY_ variables), and collects its
 * exit code and output. Also: loopback ports held busy, for the "port in use" failures.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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
    // "close", not "exit": at "exit" the child's pipes may still hold its last lines (Node's
    // child_process docs); "close" comes after both have ended.
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
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

/**
 * The lowest port the kernel hands out on its own (bind to port 0, outgoing connections): the
 * first of /proc/sys/net/ipv4/ip_local_port_range, 32768 where that cannot be read.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 20_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A loopback port N with N and N + 1 both free a moment ago (the zero-config gateway and its
 * emulators), taken below the kernel's ephemeral range: a port from `closedPort()` lies inside
 * it, where another test's `listen(0)` or an outgoing connection may take N + 1 (never checked)
 * or N before the gateway starts, which then stops on "port in use" instead of what a test
 * expects. Bounded: 200 tries.
 */
export async function closedPortPair(): Promise<number> {
  const high = ephemeralLow() - 2;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (high - 10_000));
    const first = await holdPort(port);
    const second = first ? await holdPort(port + 1) : undefined;
    await release(first);
    await release(second);
    if (first && second) return port;
  }
  throw new Error("no two adjacent free loopback ports below the ephemeral range in 200 tries");
}
