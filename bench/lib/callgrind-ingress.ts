/**
 * Instructions per ingress request of a gateway build, counted by valgrind's callgrind: far
 * less sensitive to a shared, loaded machine than CPU time. Starts `node <bin> serve` under
 * callgrind (instrumentation off until the load), warms up, switches instrumentation on for
 * `BENCH_CG_REQUESTS` signed webhooks, and divides the instructions by the requests.
 * `node --import tsx bench/lib/callgrind-ingress.ts <name>=<bin>[,ENV=value...] ...`, e.g.
 * `before=/tmp/base/bin/gateway.js off=bin/gateway.js on=bin/gateway.js,OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318`.
 */
import { execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import autocannon from "autocannon";
import type { LoadRequest } from "./autocannon-run.ts";
import { createWebhookGenerator } from "./signed-webhooks.ts";

const run = promisify(execFile);
const requests = Number(process.env.BENCH_CG_REQUESTS) || 2000;

/** Sends exactly `amount` requests from `next`; resolves with how many completed and how many were not 2xx. */
async function send(url: string, next: () => LoadRequest, amount: number) {
  const result = await autocannon({
    url,
    connections: 20,
    amount,
    // Under valgrind an answer can take seconds: a request timed out would not be counted but
    // still be processed (and its instructions counted).
    timeout: 600,
    requests: [
      {
        setupRequest: (request) => {
          const item = next();
          return { ...request, method: item.method as "POST", path: item.path, headers: item.headers, body: item.body };
        },
      },
    ],
  });
  return { total: result.requests.total, non2xx: result.non2xx, errors: result.errors + result.timeouts };
}

/** Starts the gateway under callgrind; resolves with its URL once it listens. */
function startUnderCallgrind(args: string[], env: Record<string, string>) {
  const child = spawn("valgrind", args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.includes('"msg":"listening"')) resolve(JSON.parse(line).url);
    });
    child.once("exit", (code) => reject(new Error(`gateway under callgrind exited (${code})`)));
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  return { child, url, stop };
}

async function measure(name: string, spec: string): Promise<number> {
  const [bin, ...envPairs] = spec.split(",");
  const env = Object.fromEntries(envPairs.map((pair) => pair.split("=") as [string, string]));
  const dir = await mkdtemp(join(tmpdir(), "gw-cg-"));
  const secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") };
  await writeFile(
    join(dir, "gateway.json"),
    JSON.stringify({
      server: { host: "127.0.0.1", port: 0 },
      store: { driver: "disk", dir: join(dir, "data") },
      sources: [
        { id: "esign", service: "esign", secrets: ["${BENCH_ESIGN_SECRET}"] },
        { id: "staffing", service: "staffing", secrets: ["${BENCH_STAFFING_SECRET}"] },
      ],
      admin: { apiKeyHashes: [`sha256:${createHash("sha256").update("bench-admin").digest("hex")}`] },
      log: { level: "warn" },
    }),
  );
  const out = join(dir, "callgrind.out");
  const gateway = startUnderCallgrind(
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      // One dump per thread (`callgrind.out-01` is the main thread, the event loop).
      "--separate-threads=yes",
      `--callgrind-out-file=${out}`,
      process.execPath,
      bin as string,
      "serve",
      "--config",
      join(dir, "gateway.json"),
    ],
    { BENCH_ESIGN_SECRET: secrets.esign, BENCH_STAFFING_SECRET: secrets.staffing, ...env },
  );
  const url = await gateway.url;
  try {
    const generate = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
    const pid = String(gateway.child.pid);
    await send(url, generate, 500);
    await run("callgrind_control", ["--instr=on", pid]);
    const figures = await send(url, generate, requests);
    // Trailing span exports belong to these requests too.
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.BENCH_CG_TRAIL_MS) || 3000));
    await run("callgrind_control", ["--instr=off", pid]);
    await run("callgrind_control", ["--dump", pid]);
    const dumps = (await readdir(dir)).filter((f) => f.startsWith("callgrind.out"));
    let total = 0;
    let main = 0;
    for (const file of dumps) {
      const text = await readFile(join(dir, file), "utf8");
      // A dump's header says `summary: 0` for a part that started with instrumentation off;
      // `totals:` at its end is the count.
      const totals = /^totals: (\d+)/m.exec(text);
      total += Number(totals?.[1] ?? 0);
      if (/-01(\.\d+)?$/.test(file) || /-01$/.test(file.split(".").slice(0, 2).join(".")))
        main += Number(totals?.[1] ?? 0);
    }
    const perRequest = Math.round(total / figures.total);
    const mainPerRequest = Math.round(main / figures.total);
    console.log(
      `${name.padEnd(10)} ${perRequest} instructions/request, main thread ${mainPerRequest} (${figures.total} requests, non-2xx ${figures.non2xx}, errors ${figures.errors}; dumps ${dumps.join(" ")})`,
    );
    return perRequest;
  } finally {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const results: Record<string, number> = {};
for (const arg of process.argv.slice(2)) {
  const at = arg.indexOf("=");
  results[arg.slice(0, at)] = await measure(arg.slice(0, at), arg.slice(at + 1));
}
console.log(JSON.stringify(results));
process.exit(0);
