/**
 * The static checks of the doc test: configuration blocks through the real schema
 * (`resolveConfig`), JSON samples through `JSON.parse`, code samples through esbuild's parser,
 * and relative links to files that exist. Recipes run elsewhere (run-recipes.ts).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { transform } from "esbuild";
import { inlineTransformFiles } from "../../adapters/node/load-config.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { DocBlock } from "./extract-blocks.ts";

const sha256 = (value: string) => `sha256:${createHash("sha256").update(value).digest("hex")}`;

/**
 * Values for the `${NAME}` placeholders every page may use without explaining them: the variables
 * the default configuration reads (docs/configuration.md, "Environment"). Any other placeholder
 * needs an `env: NAME=value` line in the block's doctest annotation.
 */
export const DOCUMENTED_ENV: Record<string, string> = {
  ESIGN_WEBHOOK_SECRET: "doctest_esign_secret_0123456789",
  STAFFING_WEBHOOK_SECRET: "doctest_staffing_secret_0123456789",
  GATEWAY_ADMIN_KEY_HASH: sha256("doctest_admin_key_0123456789"),
  GATEWAY_JWT_SECRET: "doctest_jwt_secret_0123456789abcdef",
  ESIGN_API_URL: "https://esign.example.com/api/public/v1",
  ESIGN_CLIENT_ID: "doctest-client",
  ESIGN_CLIENT_SECRET: "doctest_client_secret_0123456789",
  STAFFING_API_URL: "https://staffing.example.com/api/public/v1",
  STAFFING_API_KEY: "sk_test_doctest_0123456789",
  REDIS_URL: "redis://127.0.0.1:6379",
};

/** The environment a config block is resolved with. */
export function configEnv(block: DocBlock): Record<string, string> {
  return { ...DOCUMENTED_ENV, ...block.annotation.env };
}

/**
 * Validates a `json config` block as `gateway serve --config` reads it: parsed, transform `file`s
 * read (relative to `filesDir`, where the page's `file:` blocks are written), then resolved.
 * Returns the problems (none when it is a valid complete config).
 */
export async function checkJsonConfig(block: DocBlock, filesDir: string): Promise<string[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(block.body);
  } catch (error) {
    return [`not valid JSON: ${(error as Error).message}`];
  }
  try {
    raw = await inlineTransformFiles(raw, filesDir);
  } catch (error) {
    return [(error as Error).message];
  }
  return validate(raw, block);
}

function validate(raw: unknown, block: DocBlock): string[] {
  try {
    resolveConfig(raw, configEnv(block));
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

/**
 * Validates `ts config` blocks: each is written as `gateway.config.ts` into its own directory
 * beside links to the repository's `src/`, `package.json` and `node_modules` (so
 * `./src/config/schema.ts` resolves as it does at the repository root), typechecked with the
 * project's compiler options, imported, and its default export resolved.
 */
export async function checkTsConfig(block: DocBlock, workDir: string, repoRoot: string): Promise<string[]> {
  const dir = join(workDir, `ts-config-${block.page.replaceAll("/", "-")}-${block.line}`);
  await mkdir(dir, { recursive: true });
  for (const entry of ["src", "package.json", "node_modules"]) {
    if (!existsSync(join(dir, entry))) await symlink(join(repoRoot, entry), join(dir, entry));
  }
  const file = join(dir, "gateway.config.ts");
  await writeFile(file, block.body);
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({ extends: join(repoRoot, "tsconfig.json"), include: ["gateway.config.ts"] }),
  );
  const typecheck = spawnSync(join(repoRoot, "node_modules/.bin/tsc"), ["--noEmit", "-p", "tsconfig.json"], {
    cwd: dir,
    encoding: "utf8",
  });
  const typeErrors = typecheck.stdout.split("\n").filter((line) => line.startsWith("gateway.config.ts"));
  if (typecheck.status !== 0 && typeErrors.length === 0)
    return [`typecheck failed: ${typecheck.stdout}${typecheck.stderr}`];
  if (typeErrors.length > 0) return typeErrors.map((line) => `type error: ${line}`);
  try {
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (mod.default === undefined) return ["a config module needs a default export"];
    return validate(mod.default, block);
  } catch (error) {
    return [`cannot be imported: ${(error as Error).message}`];
  }
}

/** A plain ```json block must be JSON as shown. */
export function checkJson(block: DocBlock): string[] {
  try {
    JSON.parse(block.body);
    return [];
  } catch (error) {
    return [`not valid JSON (a config example is \`json config\`; samples must parse): ${(error as Error).message}`];
  }
}

/** Code samples must parse: JS and TS as modules, HTML through its `<script type="module">` elements. */
export async function checkCode(block: DocBlock): Promise<string[]> {
  const lang = block.info.split(/\s+/)[0] as string;
  const sources =
    lang === "html"
      ? [...block.body.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)].map((m) => m[1] as string)
      : [block.body];
  const loader = lang === "ts" || lang === "typescript" ? "ts" : "js";
  const problems: string[] = [];
  for (const source of sources) {
    try {
      await transform(source, { loader, format: "esm", logLevel: "silent" });
    } catch (error) {
      problems.push(`does not parse: ${(error as Error).message.split("\n").slice(0, 3).join(" ")}`);
    }
  }
  return problems;
}

/** Text without its fenced blocks (links and headings inside them are code). */
function proseOf(markdown: string): string {
  return markdown.replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\1\2\s*$/gm, "");
}

/** The anchors of a page's headings, as GitHub makes them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of proseOf(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Relative links (`[x](docs/page.md#part)`, `![x](console.png)`) must name files and headings that exist. */
export function checkLinks(page: string, markdown: string, repoRoot: string): string[] {
  const problems: string[] = [];
  for (const match of proseOf(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    const [target = "", anchor] = (match[1] as string).split("#");
    if (/^[a-z]+:/i.test(target)) continue;
    const path = target === "" ? resolve(repoRoot, page) : resolve(repoRoot, dirname(page), decodeURI(target));
    if (!existsSync(path)) {
      problems.push(`link to ${match[1]}: no such file`);
    } else if (anchor && path.endsWith(".md") && !headingAnchors(readFileSync(path, "utf8")).has(anchor)) {
      problems.push(`link to ${match[1]}: no heading with that anchor`);
    }
  }
  return problems;
}
