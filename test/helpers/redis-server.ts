/**
 * Starts a real `redis-server` on a free loopback port for one test file, with persistence off,
 * and stops it afterwards. `test/run.sh` installs redis-server when it is missing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createConnection, createServer } from "node:net";
import { createInterface } from "node:readline";

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** The server's process id (benchmarks read its CPU time). */
  pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for its exit. Idempotent. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Port to bind; default a free one. Used to restart a stopped server on the same address. */
  port?: number;
  /** Extra `redis-server` arguments, e.g. `["--requirepass", "secret"]`. */
  args?: string[];
}

const START_TIMEOUT_MS = 10_000;

/** A port that was free a moment ago (the kernel picks it). */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  await once(server, "close");
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Starts redis-server and resolves once it answers PING. Retries on another port if one was taken. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < (options.port ? 1 : 5); attempt++) {
    const port = options.port ?? (await findFreePort());
    try {
      return await startOn(port, options.args ?? []);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startOn(port: number, args: string[]): Promise<RedisServer> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const output: string[] = [];
  try {
    await waitForReady(child, output);
    await ping(port);
  } catch (error) {
    await stopChild(child);
    throw new Error(`redis-server did not start on ${port}: ${String(error)}\n${output.slice(-5).join("\n")}`);
  }
  return { port, url: `redis://127.0.0.1:${port}`, pid: child.pid, stop: () => stopChild(child) };
}

/** Resolves on the "Ready to accept connections" log line; rejects on exit or timeout. */
function waitForReady(child: ChildProcess, output: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out waiting for readiness")), START_TIMEOUT_MS);
    const onLine = (line: string) => {
      output.push(line);
      if (line.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}`));
    });
  });
}

/** One raw RESP PING; resolves on `+PONG` (or a NOAUTH error, which also proves it is serving). */
function ping(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const timer = setTimeout(() => socket.destroy(new Error("PING timed out")), START_TIMEOUT_MS);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (chunk) => {
      clearTimeout(timer);
      socket.end();
      const reply = chunk.toString();
      if (reply.startsWith("+PONG") || reply.startsWith("-NOAUTH")) resolve();
      else reject(new Error(`unexpected PING reply ${JSON.stringify(reply)}`));
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
