/**
 * Issue 29 rows 2-4: the store's directory cannot be used, and `gateway serve --config` says so in
 * one line naming `store.dir` (and the other gateway's pid when another one holds it), exits 1
 * within the run's bound (30 s, a start under load included), prints no stack trace and leaves
 * nothing listening. Also: a directory this user may not write, and a full disk at start (a
 * 16 KiB tmpfs mounted in a private mount namespace, where the machine allows one).
 */
import { execFileSync, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { BIN, type CliRun, cleanEnv, closedPort, collectRun, gateway, STACK_LINE, scratchDir } from "./cli-fixtures.ts";
import { isListening, productionConfig, productionEnv, writeConfig } from "./operator-fixtures.ts";

/** The one line, exit 1, no stack, nothing listening on `port`. */
async function expectStoreLine(run: CliRun, port: number, start: string) {
  expect(run.stderr).not.toMatch(STACK_LINE);
  expect(run.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^gateway serve: store\.dir: /)]);
  expect(run.stderr).toContain(start);
  expect(run.code).toBe(1);
  expect(run.stdout).not.toContain('"msg":"listening"');
  expect(await isListening(port)).toBe(false);
}

async function serveWithStore(storeDir: string, dir?: string) {
  const cwd = dir ?? (await scratchDir());
  const port = await closedPort();
  const file = await writeConfig(cwd, productionConfig(port, storeDir));
  const run = await gateway(["serve", "--config", file], { cwd, env: productionEnv() });
  return { run, port, cwd };
}

describe("store mistakes are one line naming store.dir", () => {
  let first: GatewayProcess | undefined;
  afterAll(async () => {
    await first?.kill();
  });

  it("a second gateway on the same store dir names the first one's pid", { timeout: 240_000 }, async () => {
    first = await startGatewayProcess();
    const { run, port } = await serveWithStore(first.dataDir);
    await expectStoreLine(
      run,
      port,
      `store.dir: the sqlite store in ${first.dataDir} is in use by another gateway process (pid ${first.child.pid})`,
    );
    // The first one is untouched.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  it("store.dir is an existing file", { timeout: 240_000 }, async () => {
    const cwd = await scratchDir();
    await writeFile(join(cwd, "store"), "not a directory\n");
    const { run, port } = await serveWithStore("./store", cwd);
    await expectStoreLine(run, port, "store.dir: ./store is a file, not a directory");
  });

  it("store.dir under a path that cannot be created (/proc/x/store) exits instead of spinning", {
    timeout: 240_000,
  }, async () => {
    const { run, port } = await serveWithStore("/proc/x/store");
    await expectStoreLine(run, port, "store.dir: /proc/x/store cannot be created (ENOENT at /proc/x)");
  });

  it("store.dir this user may not write (run as nobody)", { timeout: 240_000 }, async () => {
    // Only root can start a process as another user; elsewhere the user is not root and a
    // directory mode 0500 refuses them the same way.
    const root = process.getuid?.() === 0;
    const base = await mkdtemp(join(tmpdir(), "gw-unwritable-"));
    const cwd = join(base, "work");
    await mkdir(cwd);
    const locked = join(base, "locked");
    await mkdir(locked);
    await chmod(locked, root ? 0o700 : 0o500);
    await chmod(base, 0o755);
    await chmod(cwd, 0o777);
    const port = await closedPort();
    await writeConfig(cwd, productionConfig(port, join(locked, "store")));
    const child = spawn(process.execPath, [BIN, "serve", "--config", "gateway.json"], {
      cwd,
      env: { ...cleanEnv(productionEnv()), HOME: cwd },
      stdio: ["ignore", "pipe", "pipe"],
      ...(root ? { uid: 65534, gid: 65534 } : {}),
    });
    const run = await collectRun(child, "gateway serve");
    await expectStoreLine(run, port, `store.dir: ${locked}`);
    expect(run.stderr).toMatch(/cannot be read \(EACCES\)|is not writable by this user|cannot be created \(EACCES/);
  });

  /** Whether this machine lets us mount a tmpfs in a private mount namespace. */
  const canMount = (() => {
    try {
      execFileSync("unshare", ["-m", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt && umount /mnt"], {
        stdio: "ignore",
      });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!canMount)("the disk is full at start (a 16 KiB tmpfs)", { timeout: 240_000 }, async () => {
    const cwd = await scratchDir();
    await mkdir(join(cwd, "tiny"));
    const port = await closedPort();
    await writeConfig(cwd, productionConfig(port, "./tiny/store"));
    const child = spawn(
      "unshare",
      [
        "-m",
        "sh",
        "-c",
        'mount -t tmpfs -o size=16k tmpfs ./tiny && exec "$0" "$@"',
        process.execPath,
        BIN,
        "serve",
        "--config",
        "gateway.json",
      ],
      { cwd, env: cleanEnv(productionEnv()), stdio: ["ignore", "pipe", "pipe"] },
    );
    const run = await collectRun(child, "gateway serve");
    await expectStoreLine(run, port, "store.dir: ./tiny/store: the disk is full (");
  });
});
