// The compiled JavaScript of the gateway's TypeScript sources, in dist/ (one .js per .ts, not a
// bundle: import.meta.url-relative files, worker entries and the `#parse-module` import map keep
// working). bin/gateway.js runs it when it was built from the sources as they are, the TypeScript sources
// through tsx otherwise: a checkout never runs stale output. `npm run build` (also `npm install`'s
// and `npm pack`'s prepare, `npm start`'s prestart, `npm run bench`'s prebench, the Node suite's global setup)
// writes it. Plain JavaScript: it runs before any TypeScript loader.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The folders compiled (tsconfig.build.json's include) and the files whose change changes the output. */
const SOURCE_DIRS = ["src", "adapters", "config", "emulators"];
const SOURCE_FILES = ["package.json", "tsconfig.json", "tsconfig.build.json"];
const STAMP = "build-stamp.json";

/** Every file under the source folders and the build's own inputs, with their modification times. */
function sourceFiles(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) walk(join(root, dir));
  for (const file of SOURCE_FILES) if (existsSync(join(root, file))) files.push(join(root, file));
  return files;
}

/** The sources' content: their paths and bytes, hashed. */
function contentHash(root, files) {
  const hash = createHash("sha256");
  for (const file of [...files].sort())
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update("\0");
  return hash.digest("hex");
}

/**
 * Whether `<root>/dist` holds the output of the sources as they are now: the same number of
 * files (none added or removed since), and either none modified after the build started or, when
 * some carry a later time (an npm install extracts every file anew, a checkout touches files), the
 * same content as then.
 */
export function isCompiledFresh(root = ROOT) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, "dist", STAMP), "utf8"));
  } catch {
    return false;
  }
  if (typeof stamp?.startedAt !== "number" || typeof stamp?.files !== "number") return false;
  const files = sourceFiles(root);
  if (files.length !== stamp.files) return false;
  if (files.every((file) => statSync(file).mtimeMs <= stamp.startedAt)) return true;
  return typeof stamp.hash === "string" && contentHash(root, files) === stamp.hash;
}

/** The compiled CLI's URL when dist/ is fresh, otherwise undefined (run the sources). */
export function compiledCli(root = ROOT) {
  return isCompiledFresh(root) ? pathToFileURL(join(root, "dist/adapters/node/cli.js")).href : undefined;
}

/**
 * Compiles the sources into `<root>/dist` unless it is fresh: TypeScript's compiler (a
 * devDependency) writes one .js per .ts with relative `.ts` imports rewritten to `.js`; the
 * JavaScript files of the sources (worker entries) are copied; dist/package.json gives the
 * compiled files the root's module type, version and `#parse-module` map. Written to a temporary
 * folder and renamed into place. Returns "fresh", "built", or "unavailable" (no compiler
 * installed, e.g. `npm install --omit=dev`: the gateway runs the sources).
 */
export function compile(root = ROOT, { log = () => {} } = {}) {
  if (isCompiledFresh(root)) return "fresh";
  let tsc;
  try {
    tsc = join(dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json")), "bin/tsc");
  } catch {
    log("typescript is not installed: the gateway runs its TypeScript sources through tsx");
    return "unavailable";
  }
  const startedAt = Date.now();
  const sources = sourceFiles(root);
  const files = sources.length;
  const hash = contentHash(root, sources);
  const out = join(root, `dist.${process.pid}.tmp`);
  rmSync(out, { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], {
    cwd: root,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(
      `tsc -p tsconfig.build.json failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`,
    );
  }
  for (const file of sourceFiles(root)) {
    const path = relative(root, file);
    if (!/\.(?:js|mjs|cjs)$/.test(path) || SOURCE_FILES.includes(path)) continue;
    mkdirSync(dirname(join(out, path)), { recursive: true });
    cpSync(file, join(out, path));
  }
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const imports = JSON.parse(JSON.stringify(pkg.imports ?? {}).replace(/\.ts"/g, '.js"'));
  const compiledPkg = { name: pkg.name, version: pkg.version, description: pkg.description, type: pkg.type, imports };
  writeFileSync(join(out, "package.json"), `${JSON.stringify(compiledPkg, null, 2)}\n`);
  writeFileSync(join(out, STAMP), `${JSON.stringify({ startedAt, files, hash })}\n`);
  const old = join(root, `dist.${process.pid}.old`);
  if (existsSync(join(root, "dist"))) renameSync(join(root, "dist"), old);
  try {
    renameSync(out, join(root, "dist"));
  } catch (error) {
    // Another build put its dist/ in place between the two renames: keep that one.
    rmSync(out, { recursive: true, force: true });
    if (!isCompiledFresh(root)) throw error;
  }
  rmSync(old, { recursive: true, force: true });
  log(`compiled ${files} source files into dist/ in ${Date.now() - startedAt} ms`);
  return "built";
}
