/**
 * The `postgres` store's ingress path alone, A/B between checkouts (or settings) on one server:
 * `BENCH_CLIENTS` (32) webhooks in flight in a closed loop, each doing what the gateway does
 * for one — `BENCH_WORK_US` (100) µs of main-thread work standing in for verification and
 * normalization (it keeps the event loop as busy as a gateway's, which delays every answer the
 * store waits for), then the dedupe claim, then the append — for `BENCH_SECONDS` (5) s per round,
 * `BENCH_ROUNDS` (3) rounds alternating the sides. Each side runs in a child process of its own
 * (its store module, its environment); the server's CPU is read from /proc for its whole process
 * tree. Prints per side the median appends/s and CPU µs per append (the side's process and the
 * server), then the JSON of every round.
 *
 *   node --import tsx bench/lib/postgres-append-ab.ts <name>=<checkout dir>[,<ENV>=<value>...] ...
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { esignEventRecord, median } from "./checkout-ab.ts";
import { treeCpuSecondsOf } from "./cpu-meter.ts";

const seconds = Number(process.env.BENCH_SECONDS) || 5;
const rounds = Number(process.env.BENCH_ROUNDS) || 3;
const clients = Number(process.env.BENCH_CLIENTS) || 32;
const workUs = Number(process.env.BENCH_WORK_US ?? 100);

interface Round {
  side: string;
  appends: number;
  perSecond: number;
  sideCpuUs: number;
  serverCpuUs: number;
}

/** Tells the parent `phase` and waits for its answer (it reads the server's CPU in between). */
const ask = (phase: string) =>
  new Promise<void>((ok) => {
    process.once("message", () => ok());
    process.send?.({ phase });
  });

async function child(dir: string, url: string, schema: string): Promise<void> {
  const { postgresStore } = (await import(
    join(dir, "adapters/store/postgres/postgres-store.ts")
  )) as typeof import("../../adapters/store/postgres/postgres-store.ts");
  const store = await postgresStore({ url, schema });
  const burn = () => {
    const until = performance.now() + workUs / 1000;
    while (performance.now() < until) {}
  };
  let appends = 0;
  let running = true;
  const loop = async (c: number) => {
    for (let n = 0; running; n++) {
      burn();
      const record = esignEventRecord(n, `${c}-${n}-${randomBytes(4).toString("hex")}`, {
        subject: `agreements/${c}`,
        headers: { "content-type": "application/json" },
      });
      const key = `esign:${record.identity}`;
      const claim = await store.claim(key, 60_000);
      if (claim.status !== "claimed") throw new Error(`claim answered ${claim.status}`);
      await store.append(record, key, 86_400_000);
      if (running) appends++;
    }
  };
  // Warm up (connections, prepared statements), then measure.
  running = true;
  const warm = Array.from({ length: clients }, (_, c) => loop(c + 1000));
  await new Promise((r) => setTimeout(r, 1000));
  running = false;
  await Promise.all(warm);
  running = true;
  appends = 0;
  await ask("start");
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const loops = Array.from({ length: clients }, (_, c) => loop(c));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await ask("stop");
  await Promise.all(loops);
  await store.close();
  process.send?.({ phase: "done", appends, elapsed, cpuUs: cpu.user + cpu.system });
}

async function parent(): Promise<void> {
  const sides = process.argv.slice(2).map((arg) => {
    const [name, rest = "."] = arg.split("=", 2) as [string, string?];
    const [dir = ".", ...envs] = rest.split(",");
    return { name, dir: resolve(dir), env: Object.fromEntries(envs.map((e) => e.split("=", 2) as [string, string])) };
  });
  if (sides.length === 0) throw new Error("usage: postgres-append-ab.ts <name>=<dir>[,ENV=value...] ...");
  const server = await startPostgresServer({ fsync: true });
  const postmaster = Number((await readFile(join(server.dir, "data", "postmaster.pid"), "utf8")).split("\n")[0]);
  const results: Round[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const schema = `ab_${randomBytes(4).toString("hex")}`;
        const proc = spawn(
          process.execPath,
          ["--import", "tsx", import.meta.filename, "--child", side.dir, server.url, schema],
          {
            env: { ...process.env, ...side.env },
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          },
        );
        let serverAtStart = 0;
        let serverAtStop = 0;
        const done = await new Promise<{ appends: number; elapsed: number; cpuUs: number }>((ok, fail) => {
          proc.on("message", (m: { phase: string; appends: number; elapsed: number; cpuUs: number }) => {
            if (m.phase === "done") return ok(m);
            void treeCpuSecondsOf(postmaster).then((cpu) => {
              if (m.phase === "start") serverAtStart = cpu;
              else serverAtStop = cpu;
              proc.send("go");
            });
          });
          proc.on("exit", (code) => (code ? fail(new Error(`${side.name} exited ${code}`)) : undefined));
        });
        results.push({
          side: side.name,
          appends: done.appends,
          perSecond: Math.round(done.appends / done.elapsed),
          sideCpuUs: Math.round(done.cpuUs / done.appends),
          serverCpuUs: Math.round(((serverAtStop - serverAtStart) * 1e6) / done.appends),
        });
        console.error(JSON.stringify(results[results.length - 1]), execFileSync("uptime").toString().trim());
      }
    }
  } finally {
    await server.stop();
  }
  for (const side of sides) {
    const mine = results.filter((r) => r.side === side.name);
    console.log(
      `${side.name}: ${median(mine.map((r) => r.perSecond))} appends/s, CPU per append: side ${median(mine.map((r) => r.sideCpuUs))} µs, server ${median(mine.map((r) => r.serverCpuUs))} µs`,
    );
  }
}

if (process.argv[2] === "--child") {
  await child(resolve(process.argv[3] as string), process.argv[4] as string, process.argv[5] as string);
  process.exit(0);
} else {
  await parent();
}
