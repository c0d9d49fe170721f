/**
 * Starts a real PostgreSQL server for one test file: `initdb` into a fresh temp dir, the server
 * on 127.0.0.1 and a free port (its socket in the same dir), and stops it afterwards. `initdb`
 * refuses to run as root, so when the tests run as root (CI) the dir is given to the `postgres`
 * OS user and `initdb` / `pg_ctl` run as that user through `runuser`. Debian's binaries are
 * looked up in /usr/lib/postgresql/<version>/bin; when none are there and this is root, the
 * `postgresql` package is installed with apt-get (as test/run.sh does for redis-server).
 *
 * A watchdog process stops the server and removes the dir when the test process dies without
 * calling `stop` (a crashed or killed vitest worker), so no server outlives its tests.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { findFreePort } from "./redis-server.ts";

const run = promisify(execFile);

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  url: string;
  /** The data and socket directory. */
  dir: string;
  /** Stops the server (`-m fast`), keeping the data for `start`. */
  pause(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops the server (`-m immediate`) and removes its dir. Idempotent. */
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /**
   * `fsync` of the server. Default off: the tests stop the server cleanly or kill gateways, not
   * the machine, so the data survives without it (commits are still synchronous: the driver
   * sets `synchronous_commit = on`). Benchmarks turn it on.
   */
  fsync?: boolean;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
}

/** The directory of `initdb`, `pg_ctl` and `postgres` (the highest installed version). */
export async function findPostgresBin(): Promise<string> {
  const found = lookup();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error("PostgreSQL server binaries are missing and this is not root: run apt-get install -y postgresql");
  }
  await run("apt-get", ["update", "-qq"], { maxBuffer: 64 * 1024 * 1024 });
  await run("apt-get", ["install", "-y", "-qq", "postgresql"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    maxBuffer: 64 * 1024 * 1024,
  });
  const installed = lookup();
  if (!installed) throw new Error("apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb was found");
  return installed;
}

function lookup(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** Runs a PostgreSQL binary, as the `postgres` OS user when this process is root. */
async function asPostgres(bin: string, args: string[]): Promise<string> {
  const root = process.getuid?.() === 0;
  const [file, argv] = root ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  try {
    const { stdout } = await run(file, argv, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${bin} ${args[0] ?? ""} failed: ${e.stderr || e.message}`);
  }
}

/** Initializes a cluster in a temp dir and starts it on a free port. */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = await findPostgresBin();
  const dir = await mkdtemp(join(tmpdir(), "gw-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  const watchdog = startWatchdog(bin, dir);
  try {
    await asPostgres(join(bin, "initdb"), [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
    ]);
  } catch (error) {
    watchdog.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const settings: Record<string, string> = {
    listen_addresses: "127.0.0.1",
    unix_socket_directories: dir,
    fsync: options.fsync ? "on" : "off",
    max_connections: "200",
    ...options.settings,
  };
  const serverArgs = (port: number) =>
    [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${quoteSetting(v)}`)].join(" ");
  const pgCtl = join(bin, "pg_ctl");
  const log = join(dir, "server.log");
  let port = 0;
  const startOn = (p: number) =>
    asPostgres(pgCtl, ["-D", data, "-l", log, "-o", serverArgs(p), "-w", "-t", "60", "start"]);
  let started = false;
  let lastError: unknown;
  for (let attempt = 0; attempt < 5 && !started; attempt++) {
    port = await findFreePort();
    try {
      await startOn(port);
      started = true;
    } catch (error) {
      lastError = error;
    }
  }
  if (!started) {
    const tail = await readFile(log, "utf8").catch(() => "");
    watchdog.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${String(lastError)}\n${tail.split("\n").slice(-10).join("\n")}`);
  }
  let stopped = false;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    async pause(mode = "fast") {
      await asPostgres(pgCtl, ["-D", data, "-m", mode, "-w", "stop"]);
    },
    async start() {
      await startOn(port);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await asPostgres(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      watchdog.kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A server for the tests of one file or `describe` block, and a client to look into it. */
export interface PostgresForTests {
  server: PostgresServer;
  /** Connected to `server` as its superuser: what a test reads or changes behind the gateway's back. */
  admin: pg.Client;
}

/**
 * Starts a server (`options` as `startPostgresServer`) and connects its `admin` client before the
 * tests of the file or `describe` block it is called in, and ends both after them. Its fields
 * are set once the server is up: read them inside tests and hooks.
 */
export function usePostgresServer(options: PostgresServerOptions = {}): PostgresForTests {
  const handle: Partial<PostgresForTests> = {};
  beforeAll(async () => {
    const server = await startPostgresServer(options);
    handle.server = server;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    handle.admin = admin;
  }, 120_000);
  afterAll(async () => {
    await handle.admin?.end();
    await handle.server?.stop();
  });
  return handle as PostgresForTests;
}

/** A setting value as `pg_ctl -o` passes it to the server. */
function quoteSetting(value: string): string {
  return /^[\w./:-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

/**
 * A detached shell that waits for this process to end, then stops the server and removes its
 * dir. Killed by `stop` (SIGTERM), when the test did the cleanup itself.
 */
function startWatchdog(bin: string, dir: string) {
  const stopServer =
    process.getuid?.() === 0
      ? `runuser -u postgres -- "${bin}/pg_ctl" -D "${dir}/data" -m immediate -w stop`
      : `"${bin}/pg_ctl" -D "${dir}/data" -m immediate -w stop`;
  const script = `trap 'exit 0' TERM; while kill -0 ${process.pid} 2>/dev/null; do sleep 1 & wait $!; done; ${stopServer} >/dev/null 2>&1; rm -rf "${dir}"`;
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  child.unref();
  return child;
}
