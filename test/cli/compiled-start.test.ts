/**
 * `bin/gateway.js` runs the compiled JavaScript in dist/ (bin/compiled-sources.js) when it is as
 * new as every source file, and the TypeScript sources through tsx otherwise: what runs is never
 * stale output. Observed from outside: the module URLs the process loads (a loader hook that
 * names each one on stderr) and what the command prints.
 */
import { cp, mkdir, readdir, readFile, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { compile, isCompiledFresh } from "../../bin/compiled-sources.js";
import { ROOT, runNode, scratchDir } from "./cli-fixtures.ts";
import { productionConfig, productionEnv, writeConfig } from "./operator-fixtures.ts";

/** A `--import` module that registers a hook naming every `file:` module the process loads. */
async function moduleLogger(dir: string): Promise<string> {
  const hooks = join(dir, "log-hooks.mjs");
  await writeFile(
    hooks,
    'export async function load(url, context, next) {\n  if (url.startsWith("file:")) process.stderr.write(`loaded ${url}\\n`);\n  return next(url, context);\n}\n',
  );
  const logger = join(dir, "log-modules.mjs");
  await writeFile(
    logger,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return logger;
}

/** Runs `<root>/bin/gateway.js ...args` with the module logger; the loaded URLs apart from the rest of stderr. */
async function runLogged(
  root: string,
  logger: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
) {
  const run = await runNode(["--import", logger, join(root, "bin/gateway.js"), ...args], options);
  const lines = run.stderr.split("\n");
  const loaded = lines.filter((line) => line.startsWith("loaded ")).map((line) => line.slice("loaded ".length));
  const stderr = lines.filter((line) => !line.startsWith("loaded ")).join("\n");
  const rootUrl = pathToFileURL(join(root, "/")).href;
  return {
    ...run,
    stderr,
    /** Modules of the checkout (not node_modules) loaded as TypeScript. */
    typescript: loaded.filter(
      (url) => url.startsWith(rootUrl) && !url.includes("/node_modules/") && /\.ts$/.test(url.split("?")[0] as string),
    ),
    /** Modules of the checkout's dist/. */
    compiled: loaded.filter((url) => url.startsWith(`${rootUrl}dist/`)),
    loaded,
    tsx: loaded.filter((url) => url.includes("/node_modules/tsx/")),
  };
}

/** A copy of the checkout's sources and build inputs (node_modules linked), without dist/. */
async function copyCheckout(): Promise<string> {
  const root = join(await scratchDir(), "checkout");
  await mkdir(root);
  for (const entry of [
    "bin",
    "src",
    "adapters",
    "config",
    "emulators",
    "package.json",
    "tsconfig.json",
    "tsconfig.build.json",
  ]) {
    await cp(join(ROOT, entry), join(root, entry), { recursive: true, preserveTimestamps: true });
  }
  await symlink(join(ROOT, "node_modules"), join(root, "node_modules"));
  return root;
}

describe("bin/gateway.js: the compiled build when fresh, the sources otherwise", () => {
  it("this checkout (compiled by the suite's global setup): no TypeScript module, no tsx, the same answers", {
    timeout: 240_000,
  }, async () => {
    expect(isCompiledFresh()).toBe(true);
    const dir = await scratchDir();
    const logger = await moduleLogger(dir);
    await writeConfig(dir, productionConfig(0));
    const run = await runLogged(ROOT, logger, ["validate", "--config", "gateway.json"], {
      cwd: dir,
      env: productionEnv(),
    });
    expect(run.stdout).toBe("gateway.json: valid (2 sources, 2 destinations, 1 routes)\n");
    expect(run.code).toBe(0);
    expect(run.compiled.length).toBeGreaterThan(10);
    expect(run.typescript).toEqual([]);
    expect(run.tsx).toEqual([]);
  });

  it("a TypeScript config that imports defineConfig from the sources: loaded through tsx, the gateway compiled", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    const logger = await moduleLogger(dir);
    const schema = pathToFileURL(join(ROOT, "src/config/schema.ts")).href;
    // A user's project: an ES module package (a TypeScript file elsewhere is CommonJS to tsx).
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await writeFile(
      join(dir, "gateway.config.ts"),
      `import { defineConfig } from ${JSON.stringify(schema)};\nconst port: number = 0;\nexport default defineConfig(${JSON.stringify(productionConfig(0)).replace('"port":0', '"port":port')});\n`,
    );
    const run = await runLogged(ROOT, logger, ["validate", "--config", "gateway.config.ts"], {
      cwd: dir,
      env: productionEnv(),
    });
    expect(run.stderr.trim()).toBe("");
    expect(run.stdout).toBe("gateway.config.ts: valid (2 sources, 2 destinations, 1 routes)\n");
    expect(run.code).toBe(0);
    // The config and the schema it imports, as TypeScript; the gateway's own modules compiled.
    expect(run.loaded).toContain(pathToFileURL(join(dir, "gateway.config.ts")).href);
    expect(run.typescript).toContain(schema);
    expect(run.compiled.some((url) => url.endsWith("/dist/adapters/node/validate-command.js"))).toBe(true);
  });

  it("a copy of the checkout: sources before the build, dist/ after it, the sources again once one changes", {
    timeout: 600_000,
  }, async () => {
    const root = await copyCheckout();
    const dir = await scratchDir();
    const logger = await moduleLogger(dir);

    // No dist/: the sources through tsx.
    expect(isCompiledFresh(root)).toBe(false);
    const before = await runLogged(root, logger, ["validate", "--help"], { cwd: dir });
    expect(before.code).toBe(0);
    expect(before.compiled).toEqual([]);
    expect(before.typescript).toContain(pathToFileURL(join(root, "adapters/node/validate-command.ts")).href);

    // Built: the same usage text, from dist/, with no TypeScript loaded.
    expect(compile(root)).toBe("built");
    expect(isCompiledFresh(root)).toBe(true);
    expect(compile(root)).toBe("fresh");
    const built = await runLogged(root, logger, ["validate", "--help"], { cwd: dir });
    expect(built.stdout).toBe(before.stdout);
    expect(built.code).toBe(0);
    expect(built.typescript).toEqual([]);
    expect(built.tsx).toEqual([]);
    expect(built.compiled).toContain(pathToFileURL(join(root, "dist/adapters/node/validate-command.js")).href);

    // A source changed after the build: what runs is the change (the sources), not dist/.
    const command = join(root, "adapters/node/validate-command.ts");
    const source = await readFile(command, "utf8");
    expect(source).toContain("Check a configuration file");
    await writeFile(command, source.replace("Check a configuration file", "Check a changed configuration file"));
    expect(isCompiledFresh(root)).toBe(false);
    const changed = await runLogged(root, logger, ["validate", "--help"], { cwd: dir });
    expect(changed.stdout).toContain("Check a changed configuration file");
    expect(changed.compiled).toEqual([]);

    // Rebuilt: fresh again and the change compiled in.
    expect(compile(root)).toBe("built");
    const rebuilt = await runLogged(root, logger, ["validate", "--help"], { cwd: dir });
    expect(rebuilt.stdout).toBe(changed.stdout);
    expect(rebuilt.typescript).toEqual([]);

    // A source file added (with an old modification time) is a change too.
    const added = join(root, "src/added-later.ts");
    await writeFile(added, "export const added = 1;\n");
    await utimes(added, new Date("2000-01-01"), new Date("2000-01-01"));
    expect(isCompiledFresh(root)).toBe(false);
  });

  it("an installed package (every file extracted after the build, dist/ included): fresh while the content is the same", {
    timeout: 600_000,
  }, async () => {
    const root = await copyCheckout();
    expect(compile(root)).toBe("built");
    // npm extracts a tarball's files with the time of the install, later than the build.
    const extracted = new Date(Date.now() + 3_600_000);
    const touch = async (path: string): Promise<void> => {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        if (entry.isDirectory()) await touch(join(path, entry.name));
        else if (entry.isFile()) await utimes(join(path, entry.name), extracted, extracted);
      }
    };
    for (const entry of ["src", "adapters", "config", "emulators", "dist"]) await touch(join(root, entry));
    for (const file of ["package.json", "tsconfig.json", "tsconfig.build.json"]) {
      await utimes(join(root, file), extracted, extracted);
    }
    expect(isCompiledFresh(root)).toBe(true);
    // The same files, one of them changed: stale.
    const errors = join(root, "src/errors.ts");
    await writeFile(errors, `${await readFile(errors, "utf8")}\n`);
    expect(isCompiledFresh(root)).toBe(false);
  });
});
