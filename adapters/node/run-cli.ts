/**
 * Runs a citty command tree the conventional way: `--help`/`-h` on any command prints its usage
 * (exit 0), `--version` prints the version, an unknown command, option or extra argument prints
 * one line and the usage (exit 64, EX_USAGE), expected failures print one line (exit 1), config
 * errors one line per field (exit 1; a single problem on the one line). citty's own parser accepts any option, so the strict checks
 * live here.
 */
import { type ArgsDef, type CommandDef, type CommandMeta, renderUsage, runCommand } from "citty";
import type { ConfigError } from "../../src/config/resolve-config.ts";
import { CliFailure, UsageError } from "./cli-errors.ts";
import { exitAfterOutput } from "./exit-after-output.ts";

const EX_USAGE = 64;

type AnyCommand = CommandDef<ArgsDef>;

async function resolve<T>(value: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> {
  return typeof value === "function" ? (value as () => T | Promise<T>)() : value;
}

/** One command of the chain the arguments select (`gateway`, `gateway transform`, ...). */
interface Selected {
  cmd: AnyCommand;
  /** Space-joined names from the root (`gateway listen`). */
  name: string;
  /** Arguments after the command's name. */
  rest: string[];
  /** A name in the place of a subcommand that the command does not have. */
  unknown?: string;
}

/** Whether `token` names a string option of `args` (its value is the next token). */
function takesValue(token: string, args: ArgsDef): boolean {
  if (token.includes("=")) return false;
  const def = findOption(token.replace(/^-{1,2}/, ""), args);
  return def !== undefined && (def.type === "string" || def.type === "enum");
}

function findOption(name: string, args: ArgsDef) {
  const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  for (const [key, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = "alias" in def && def.alias ? [def.alias].flat() : [];
    if (camel(key) === camel(name) || aliases.includes(name)) return def;
    if (def.type === "boolean" && (camel(`no-${key}`) === camel(name) || name === `no${key}`)) return def;
  }
  return undefined;
}

/** Follows subcommand names through `argv` as far as they name subcommands. */
async function selectCommand(root: AnyCommand, argv: string[]): Promise<Selected> {
  let selected: Selected = { cmd: root, name: (await resolve(root.meta))?.name ?? "gateway", rest: argv };
  for (;;) {
    const subCommands = await resolve(selected.cmd.subCommands);
    if (!subCommands || Object.keys(subCommands).length === 0) return selected;
    const args = (await resolve(selected.cmd.args)) ?? {};
    let index = -1;
    for (let i = 0; i < selected.rest.length; i++) {
      const token = selected.rest[i] as string;
      if (token === "--") break;
      if (token.startsWith("-")) {
        if (takesValue(token, args)) i++;
        continue;
      }
      index = i;
      break;
    }
    if (index === -1) return selected;
    const name = selected.rest[index] as string;
    const sub = name in subCommands ? await resolve(subCommands[name]) : undefined;
    if (!sub) return { ...selected, unknown: name };
    selected = { cmd: sub, name: `${selected.name} ${name}`, rest: selected.rest.slice(index + 1) };
  }
}

/** Rejects options the command does not declare, string options without a value, and extra arguments. */
function checkArguments(args: ArgsDef, rest: string[], hasSubCommands: boolean): void {
  let positionals = 0;
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] as string;
    if (token === "--") {
      positionals += rest.length - i - 1;
      break;
    }
    if (token.startsWith("-") && token !== "-") {
      const name = token.replace(/^-{1,2}/, "").split("=")[0] as string;
      const def = findOption(name, args);
      if (!def) throw new UsageError(`unknown option "${token.split("=")[0]}"`);
      if ((def.type === "string" || def.type === "enum") && !token.includes("=")) {
        const value = rest[i + 1];
        if (value === undefined || value.startsWith("--")) throw new UsageError(`option "${token}" needs a value`);
        i++;
      }
      continue;
    }
    positionals++;
  }
  const declared = Object.values(args).filter((def) => def.type === "positional").length;
  if (!hasSubCommands && positionals > declared) {
    const extra = rest.filter((t) => !t.startsWith("-") || t === "-").at(-1);
    throw new UsageError(`unexpected argument "${extra}"`);
  }
}

/** citty's usage text, without colours when the output is not a terminal. */
async function usageOf(selected: Selected, root: AnyCommand, tty: boolean | undefined): Promise<string> {
  const rootMeta = (await resolve(root.meta)) ?? {};
  const meta: CommandMeta = (await resolve(selected.cmd.meta)) ?? {};
  const parentName = selected.name.split(" ").slice(0, -1).join(" ");
  // citty names a command from one parent; give it the whole chain (`gateway transform test`).
  const parent = parentName ? { meta: { name: parentName, version: rootMeta.version } } : undefined;
  const text = await renderUsage(
    { ...selected.cmd, meta: { ...meta, name: meta.name ?? selected.name.split(" ").at(-1) } },
    parent,
  );
  return (tty ? text : stripColours(text)).replace(/[ \t]+$/gm, "");
}

/** Removes ANSI colour codes (citty colours its messages and usage). */
function stripColours(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

const isCittyError = (error: unknown): error is Error & { code: string } =>
  error instanceof Error && error.name === "CLIError";

/**
 * A store the gateway must not open (from a newer release, or held by another process): one
 * line, no stack. Matched by name so that this file loads no store driver.
 */
const isStoreRefusal = (error: unknown): error is Error =>
  error instanceof Error && (error.name === "StoreVersionError" || error.name === "StoreLockedError");

/** A configuration error (src/config/resolve-config.ts), matched by name: `--help` loads no config schema. */
const isConfigError = (error: unknown): error is ConfigError =>
  error instanceof Error && error.name === "ConfigError" && Array.isArray((error as Partial<ConfigError>).problems);

/**
 * Runs `root` on `argv` and exits the process with the conventional code, once what it printed
 * has been written out (exit-after-output.ts).
 */
export async function runCli(root: AnyCommand, argv: string[] = process.argv.slice(2)): Promise<void> {
  let selected: Selected = { cmd: root, name: (await resolve(root.meta))?.name ?? "gateway", rest: argv };
  try {
    const beforeDashes = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
    if (argv.length === 1 && argv[0] === "--version") {
      console.log((await resolve(root.meta))?.version ?? "unknown");
      return;
    }
    selected = await selectCommand(root, argv);
    if (selected.unknown !== undefined) throw new UsageError(`unknown command "${selected.unknown}"`);
    if (beforeDashes.includes("--help") || beforeDashes.includes("-h")) {
      console.log(await usageOf(selected, root, process.stdout.isTTY));
      return;
    }
    const subCommands = await resolve(selected.cmd.subCommands);
    const hasSubCommands = !!subCommands && Object.keys(subCommands).length > 0;
    if (hasSubCommands && !selected.cmd.run) {
      // No command name was found: only options (none of which the root takes), or nothing.
      const first = selected.rest[0];
      throw new UsageError(first === undefined ? "no command given" : `unknown option "${first.split("=")[0]}"`);
    }
    checkArguments((await resolve(selected.cmd.args)) ?? {}, selected.rest, hasSubCommands);
    await runCommand(selected.cmd, { rawArgs: selected.rest });
  } catch (error) {
    if (error instanceof UsageError || isCittyError(error)) {
      console.error(
        `${selected.name}: ${stripColours(error.message)}\n\n${await usageOf(selected, root, process.stderr.isTTY)}`,
      );
      return exitAfterOutput(EX_USAGE);
    }
    if (error instanceof CliFailure) console.error(`${selected.name}: ${error.message}`);
    else if (isStoreRefusal(error)) console.error(`${selected.name}: ${error.message}`);
    // One problem is one line (a missing secret: the variable and the field that references it).
    else if (isConfigError(error) && error.problems.length === 1) {
      console.error(`invalid configuration: ${error.problems[0]}`);
    } else if (isConfigError(error)) console.error(error.message);
    else console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    // Not process.exit() right away: the line may still be in stderr's queue (a pipe read slowly).
    return exitAfterOutput(1);
  }
}
