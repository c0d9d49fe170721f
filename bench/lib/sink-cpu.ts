/**
 * CPU per attempt of the Node `http` sink alone (build the signed request, send it through the
 * guarded undici transport, read the answer), in alternating rounds between checkouts loaded in
 * this one process, so a loaded machine's drift falls on every build alike. The destination is a
 * loopback server in its own process answering 204 (bench/peers/latency-destination.ts); 16
 * attempts in flight (the default `concurrency`), a realistic e-sign event as the record.
 *
 *   node --import tsx bench/lib/sink-cpu.ts [<name>=<checkout dir> ...]   (default: this checkout)
 *
 * `BENCH_ATTEMPTS` per round (default 20,000), `BENCH_ROUNDS` (default 5), `BENCH_SEND_THREAD=on|off`
 * (the send thread, whatever the cores; a checkout older than it ignores this). Prints the main
 * thread's CPU µs per attempt (what the event loop pays: /proc, 10 ms ticks), the process's (user +
 * system, every thread: the send thread of http-send-thread.ts included) and attempts/s per
 * round, then the medians.
 */
import { pathToFileURL } from "node:url";
import type { SinkFactory } from "../../src/delivery/sink-contract.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { receiver } from "../cases/latency.ts";
import { checkoutsOf, esignEventRecord, median, sendThreadChoice } from "./checkout-ab.ts";
import { mainThreadCpuSecondsOf } from "./cpu-meter.ts";

const attempts = Number(process.env.BENCH_ATTEMPTS) || 20_000;
const rounds = Number(process.env.BENCH_ROUNDS) || 5;
const inFlight = 16;
const sinkDeps = sendThreadChoice();
const checkouts = checkoutsOf(process.argv.slice(2));

/** A recorded e-sign event as the router hands it to a lane (unique id per attempt). */
const record = (n: number): EventRecord =>
  esignEventRecord(n, `sink-cpu-${n}`, {
    subject: "agreements/8d5f2a7e-3c1b-4f7e-9a51-2b6c0d9e4f13",
    headers: { "content-type": "application/json", "x-esign-signature": "[redacted]" },
  });

const destination = await receiver();
const records = Array.from({ length: 1000 }, (_, n) => record(n));
const sinks = await Promise.all(
  checkouts.map(async ({ name, dir }) => {
    const module = (await import(pathToFileURL(`${dir}/adapters/sink/http.ts`).href)) as {
      httpWebhookSink: SinkFactory<never, { inThread?: boolean } | undefined>;
    };
    const config = {
      ...destination.config,
      mode: "cloudevent",
      timeoutSeconds: 15,
      allowPrivateNetworks: false,
      concurrency: inFlight,
    } as never;
    return { name, sink: module.httpWebhookSink(config, sinkDeps) };
  }),
);

const signal = new AbortController().signal;
async function round(sink: (typeof sinks)[number]["sink"]) {
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < attempts) {
      const n = next++;
      const result = await sink.deliver(records[n % records.length] as EventRecord, signal, { attempt: 1 });
      if (!result.ok) failed++;
    }
  };
  const cpu = process.cpuUsage();
  const main = await mainThreadCpuSecondsOf(process.pid);
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(cpu);
  return {
    us: (((await mainThreadCpuSecondsOf(process.pid)) - main) * 1e6) / attempts,
    processUs: (used.user + used.system) / attempts,
    perSecond: Math.round(attempts / ((performance.now() - started) / 1000)),
    failed,
  };
}

const results = new Map<string, number[]>();
for (const { sink } of sinks) await round(sink); // warm-up
for (let r = 1; r <= rounds; r++) {
  for (const { name, sink } of sinks) {
    const figures = await round(sink);
    results.set(name, [...(results.get(name) ?? []), figures.us]);
    console.log(
      `round ${r} ${name.padEnd(8)} main thread ${figures.us.toFixed(1)} µs CPU per attempt (process ${figures.processUs.toFixed(1)})   ${figures.perSecond} attempts/s   failed ${figures.failed}`,
    );
  }
}
for (const [name, values] of results)
  console.log(`${name.padEnd(8)} median ${median(values).toFixed(1)} µs of main thread per attempt`);
await Promise.all(sinks.map(({ sink }) => sink.close()));
await destination.close();
process.exit(0);
