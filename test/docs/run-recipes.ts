/**
 * Runs the shell recipes of one page session as a reader would: in a fresh directory that looks
 * like a clone of the repository (its entries linked, no `.data/`), in one bash, in order, with
 * `background` blocks left running. With permission to create namespaces (root, or user
 * namespaces) the session gets its own network and process namespace: the recipes' fixed ports
 * (8787, 8788, 3000, 6379) are free there whatever else runs on the machine, and every process
 * the recipes started ends with the session. docs/contributing.md describes the annotations.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { DocBlock } from "./extract-blocks.ts";

export interface Session {
  page: string;
  name: string;
  /** Recipe blocks in page order (skipped ones included, not run). */
  recipes: DocBlock[];
  /** Blocks with `file:` (configs, transform modules): written into the session directory first. */
  files: DocBlock[];
}

export interface RecipeResult {
  block: DocBlock;
  status: "passed" | "failed" | "skipped" | "not-reached";
  output: string;
  problems: string[];
}

/** Entries of the repository a session directory does not link (state a reader's clone lacks). */
const NOT_LINKED = new Set([
  ".git",
  ".data",
  ".wrangler",
  ".gateway-listen",
  ".dev.vars",
  "test-artifacts",
  "coverage",
]);

const DEFAULT_TIMEOUT_S = 30;
/** A recipe that starts a gateway itself: its session gets no implicit `npm start`. */
export const STARTS_GATEWAY = /\bnpm start\b|\bgateway(\.js)? serve\b|\bnpm run dev(:worker)?\b|\bwrangler dev\b/;
/** Recipes that install packages never run (check-page.ts reports them). */
export const INSTALLS = /\bnpm (install|ci|i)\b/;
/** The zero-config gateway a session starts when none of its blocks starts anything itself. */
const ZERO_CONFIG_START: Pick<DocBlock, "body" | "annotation"> = {
  body: "npm start\n",
  annotation: { background: "emulators listening", expect: [], env: {} },
};

let isolation: "namespaces" | "none" | undefined;
/** Whether sessions can get their own network and process namespaces here. */
export function sessionIsolation(): "namespaces" | "none" {
  // DOCTEST_ISOLATION=none runs sessions without namespaces (their fixed ports must then be free).
  const can =
    process.env.DOCTEST_ISOLATION !== "none" &&
    spawnSync("unshare", [...unshareArgs(), "ip", "link", "set", "lo", "up"], { stdio: "ignore" }).status === 0;
  isolation ??= can ? "namespaces" : "none";
  return isolation;
}

function unshareArgs(): string[] {
  const user = process.getuid?.() === 0 ? [] : ["--map-root-user"];
  return [...user, "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc"];
}

/** Groups a page's recipe blocks (and `file:` config blocks) into sessions, in order of first use. */
export function planSessions(blocks: DocBlock[]): Session[] {
  const sessions = new Map<string, Session>();
  for (const block of blocks) {
    const runs = block.kind === "recipe";
    const file = block.kind !== "recipe" && block.annotation.file !== undefined;
    if (!runs && !file) continue;
    const name = block.annotation.session ?? "page";
    let session = sessions.get(name);
    if (!session) {
      session = { page: block.page, name, recipes: [], files: [] };
      sessions.set(name, session);
    }
    (runs ? session.recipes : session.files).push(block);
  }
  return [...sessions.values()].filter((s) => s.recipes.some((b) => b.annotation.skip === undefined));
}

/** Runs one session; every recipe gets a result. */
export async function runSession(session: Session, repoRoot: string): Promise<RecipeResult[]> {
  const installs = session.recipes.filter((b) => b.annotation.skip === undefined && INSTALLS.test(b.body));
  if (installs.length > 0) {
    // The session directory links the repository's node_modules: an install would rewrite it.
    return session.recipes.map((block) => ({
      block,
      status: installs.includes(block) ? "failed" : "not-reached",
      output: "",
      problems: ["installs packages: not run (skip it with a reason)"],
    }));
  }
  const dir = await mkdtemp(join(tmpdir(), "doctest-"));
  try {
    for (const entry of await readdir(repoRoot)) {
      if (!NOT_LINKED.has(entry)) await symlink(join(repoRoot, entry), join(dir, entry));
    }
    for (const block of session.files) {
      const file = join(dir, block.annotation.file as string);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, block.body);
    }
    return await runIn(dir, session);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Step {
  index: number;
  block: Pick<DocBlock, "body" | "annotation">;
}

async function runIn(dir: string, session: Session): Promise<RecipeResult[]> {
  const runnable = session.recipes.filter((b) => b.annotation.skip === undefined);
  const startsItsOwn = runnable.some((b) => STARTS_GATEWAY.test(b.body));
  const gateway = runnable.find((b) => b.annotation.gateway)?.annotation.gateway ?? "zero-config";
  const steps: Step[] = [];
  if (gateway === "zero-config" && !startsItsOwn) steps.push({ index: -1, block: ZERO_CONFIG_START });
  session.recipes.forEach((block, index) => {
    if (block.annotation.skip === undefined) steps.push({ index, block });
  });
  await writeFile(join(dir, ".doctest-session.sh"), sessionScript(steps));

  const events = await execute(dir, steps);
  const results: RecipeResult[] = [];
  for (const [index, block] of session.recipes.entries()) {
    if (block.annotation.skip !== undefined) {
      results.push({ block, status: "skipped", output: "", problems: [] });
      continue;
    }
    const output = await readFile(join(dir, `.doctest-out-${index}.txt`), "utf8").catch(() => undefined);
    const event = events.get(index);
    if (output === undefined || !event) {
      results.push({ block, status: "not-reached", output: "", problems: [events.get(-1)?.problem ?? "not reached"] });
      continue;
    }
    const problems = event.problem ? [event.problem] : [];
    for (const pattern of block.annotation.expect) {
      if (!new RegExp(pattern, "m").test(output)) problems.push(`output does not match /${pattern}/`);
    }
    results.push({ block, status: problems.length ? "failed" : "passed", output, problems });
  }
  const start = events.get(-1);
  if (start?.problem) {
    const startOutput = await readFile(join(dir, ".doctest-out--1.txt"), "utf8").catch(() => "");
    const first = results.find((r) => r.status !== "skipped");
    if (first) {
      first.status = "failed";
      first.problems.unshift(`the session's zero-config gateway (npm start): ${start.problem}\n${startOutput}`);
    }
  }
  return results;
}

/** The bash script of a session: each step sourced in order, markers on fd 3. */
function sessionScript(steps: Step[]): string {
  const lines = [
    "set -eo pipefail",
    "ip link set lo up 2>/dev/null || true # the namespace's loopback (a no-op without namespaces)",
    "trap 'echo \"@@end $? ${__step:-none}\" >&3' EXIT",
  ];
  for (const { index, block } of steps) {
    const body = `.doctest-step-${index}.sh`;
    const out = `.doctest-out-${index}.txt`;
    lines.push(`__step=${index}`, `echo "@@begin ${index}" >&3`);
    for (const [name, value] of Object.entries(block.annotation.env)) lines.push(`export ${name}=${shellQuote(value)}`);
    lines.push(`cat > ${body} <<'__DOCTEST_BLOCK__'`, block.body.trimEnd(), "__DOCTEST_BLOCK__");
    if (block.annotation.background !== undefined) {
      lines.push(
        `( source ${body} ) > ${out} 2>&1 < /dev/null &`,
        "__pid=$!",
        `until grep -qE -- ${shellQuote(block.annotation.background)} ${out}; do`,
        `  kill -0 $__pid 2>/dev/null || { echo "@@died ${index}" >&3; exit 1; }`,
        "  sleep 0.05",
        "done",
      );
    } else if (block.annotation.eventually !== undefined) {
      // Re-run (a read-only block) until every expected pattern is in its output; the watchdog bounds it.
      lines.push(
        `until source ${body} > ${out} 2>&1 < /dev/null && ${matchesAll(block.annotation.expect, out)}; do sleep 0.2; done`,
      );
    } else {
      lines.push(`source ${body} > ${out} 2>&1 < /dev/null`);
    }
    lines.push(`echo "@@done ${index}" >&3`);
  }
  // Background processes show what they received by the end: wait for their expected output.
  for (const { index, block } of steps) {
    if (block.annotation.background === undefined || block.annotation.expect.length === 0) continue;
    lines.push(
      `__step=${index}`,
      `echo "@@begin ${index}" >&3`,
      `until ${matchesAll(block.annotation.expect, `.doctest-out-${index}.txt`)}; do sleep 0.05; done`,
      `echo "@@done ${index}" >&3`,
    );
  }
  lines.push("__step=", "exit 0");
  return `${lines.join("\n")}\n`;
}

function matchesAll(patterns: string[], file: string): string {
  return patterns.length === 0 ? "true" : patterns.map((p) => `grep -qE -- ${shellQuote(p)} ${file}`).join(" && ");
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

interface StepEvent {
  done: boolean;
  problem?: string;
}

/** Runs the session script, enforcing each step's timeout; returns what happened to each step. */
function execute(dir: string, steps: Step[]): Promise<Map<number, StepEvent>> {
  const timeouts = new Map(
    steps.map((s) => [
      s.index,
      (s.block.annotation.eventually ?? s.block.annotation.timeout ?? DEFAULT_TIMEOUT_S) * 1000,
    ]),
  );
  const namespaced = sessionIsolation() === "namespaces";
  const [command, args] = namespaced
    ? ["unshare", [...unshareArgs(), "bash", ".doctest-session.sh"]]
    : ["bash", [".doctest-session.sh"]];
  const child: ChildProcess = spawn(command, args, {
    cwd: dir,
    env: sessionEnv(dir),
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    // Without namespaces the session is its own process group, ended as one at the close.
    detached: !namespaced,
  });
  const events = new Map<number, StepEvent>();
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolvePromise) => {
    let timer: NodeJS.Timeout | undefined;
    let current: number | undefined;
    const stop = () => {
      if (namespaced) child.kill("SIGKILL");
      else if (child.pid) process.kill(-child.pid, "SIGKILL");
    };
    const arm = (index: number) => {
      clearTimeout(timer);
      current = index;
      timer = setTimeout(() => {
        events.set(index, { done: false, problem: `timed out after ${(timeouts.get(index) ?? 0) / 1000} s` });
        stop();
      }, timeouts.get(index));
    };
    createInterface({ input: child.stdio[3] as NodeJS.ReadableStream }).on("line", (line) => {
      const [marker, a, b] = line.split(" ");
      const index = Number(a);
      if (marker === "@@begin") {
        events.set(index, { done: false });
        arm(index);
      } else if (marker === "@@done") {
        events.set(index, { done: true });
      } else if (marker === "@@died") {
        events.set(index, { done: false, problem: "exited before its output matched the background pattern" });
      } else if (marker === "@@end" && b !== "none" && b !== "" && b !== undefined) {
        const failed = Number(b);
        if (!events.get(failed)?.problem) events.set(failed, { done: false, problem: `exited with status ${a}` });
      }
    });
    child.once("exit", () => {
      clearTimeout(timer);
      if (current !== undefined && !events.get(current)?.done && !events.get(current)?.problem) {
        events.set(current, { done: false, problem: `the session ended here: ${stderr.trim().slice(-500)}` });
      }
      if (!namespaced && child.pid) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // the group has already ended
        }
      }
      resolvePromise(events);
    });
  });
}

/** A clean environment: none of the gateway's variables leak in from the test process. */
function sessionEnv(dir: string): NodeJS.ProcessEnv {
  const keep = ["PATH", "LANG", "TERM", "USER", "SHELL"];
  const env: NodeJS.ProcessEnv = {};
  for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
  return {
    ...env,
    HOME: dir,
    NO_COLOR: "1",
    CI: "1",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
}
