/**
 * The deployable Worker as `wrangler deploy --dry-run --outdir` builds it (offline: no login,
 * no telemetry), and a Miniflare instance running that bundle with the Durable Objects of
 * wrangler.toml and persisted storage. Used by the Workers restart test and the `worker` bench.
 */
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Miniflare } from "miniflare";

/** Offline wrangler: no metrics, no location data requests. */
export const OFFLINE_WRANGLER_ENV = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/** Builds the bundle into `outdir`; resolves with the path of its main module. */
export async function buildWorkerBundle(outdir: string): Promise<string> {
  const wrangler = join(process.cwd(), "node_modules", ".bin", "wrangler");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(wrangler, ["deploy", "--dry-run", "--outdir", outdir], {
      env: { ...process.env, ...OFFLINE_WRANGLER_ENV },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`wrangler exited ${code}:\n${output}`))));
  });
  const main = (await readdir(outdir)).find((name) => name.endsWith(".js"));
  if (!main) throw new Error(`no .js module in ${outdir}`);
  return join(outdir, main);
}

export interface BundleOptions {
  scriptPath: string;
  /** Directory of the Durable Objects' SQLite files (kept across instances). */
  persistDir: string;
  bindings: Record<string, string>;
}

/** Starts workerd on the bundle with the gateway's objects (as wrangler.toml declares them). */
export async function startWorkerBundle(options: BundleOptions): Promise<Miniflare> {
  const miniflare = new Miniflare({
    modules: true,
    scriptPath: options.scriptPath,
    // Module names are relative to this root (the bundle may live outside the working directory).
    modulesRoot: dirname(options.scriptPath),
    // The transform sandbox's QuickJS WebAssembly is a module of the bundle (adapters/cloudflare/quickjs-worker.ts).
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2026-04-26",
    host: "127.0.0.1",
    port: 0,
    bindings: options.bindings,
    durableObjects: {
      GATEWAY_STORE: { className: "StoreShardObject", useSQLite: true },
      GATEWAY_DELIVERY: { className: "DeliveryObject", useSQLite: true },
    },
    durableObjectsPersist: options.persistDir,
  });
  await miniflare.ready;
  return miniflare;
}
