/**
 * `gateway --help`, `gateway <command> --help`, `--version`, and the usage errors: an unknown
 * command, an unknown option, a missing argument or an extra one print one line naming it, then
 * the usage, and exit 64 (EX_USAGE); none prints a stack trace. Run as typed: `node bin/gateway.js`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gateway, ROOT, STACK_LINE } from "./cli-fixtures.ts";

const COMMANDS = ["serve", "validate", "trigger", "hash-key", "emulate", "listen", "transform", "erase"];
const VERSION = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")).version as string;

describe("help", () => {
  it("gateway --help lists every command, exit 0", async () => {
    const run = await gateway(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`USAGE gateway ${COMMANDS.join("|")}`);
    for (const command of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^\\s+${command}\\s{2,}\\S`, "m"));
    expect(run.stdout).not.toContain("\u001b[");
    expect(run.stderr).toBe("");
  });

  it.each(COMMANDS)("gateway %s --help prints that command's usage, exit 0", async (command) => {
    const run = await gateway([command, "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`USAGE gateway ${command}`);
    expect(run.stdout).toContain(`(gateway ${command} v${VERSION})`);
    expect(run.stderr).toBe("");
  });

  it("-h anywhere in the arguments is help too", async () => {
    const run = await gateway(["trigger", "esign", "-h"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("USAGE gateway trigger [OPTIONS] <SOURCE> <TYPE>");
  });

  it("--version prints package.json's version", async () => {
    const run = await gateway(["--version"]);
    expect(run).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });
});

describe("usage errors: one line, the usage, exit 64", () => {
  const cases: [string, string[], string, string][] = [
    ["an unknown command", ["bogus"], 'gateway: unknown command "bogus"', "USAGE gateway serve|"],
    ["no command", [], "gateway: no command given", "USAGE gateway serve|"],
    [
      "an unknown option before any command",
      ["--verbose"],
      'gateway: unknown option "--verbose"',
      "USAGE gateway serve|",
    ],
    ...COMMANDS.map((c): [string, string[], string, string] => [
      `an unknown option of ${c}`,
      [c, "--bogus"],
      `gateway ${c}: unknown option "--bogus"`,
      `USAGE gateway ${c}`,
    ]),
    [
      "a missing argument",
      ["trigger", "esign"],
      "gateway trigger: Missing required positional argument: TYPE",
      "USAGE gateway trigger",
    ],
    ["an extra argument", ["serve", "now"], 'gateway serve: unexpected argument "now"', "USAGE gateway serve"],
    [
      "an option without its value",
      ["serve", "--port"],
      'gateway serve: option "--port" needs a value',
      "USAGE gateway serve",
    ],
    [
      "a bad port",
      ["serve", "--port", "http"],
      "gateway serve: --port: expected an integer 0..65535, received http",
      "USAGE gateway serve",
    ],
    [
      "a missing required option",
      ["listen", "http://127.0.0.1:8787"],
      "gateway listen: Missing required argument: --forward-to",
      "USAGE gateway listen",
    ],
  ];

  it.each(cases)("%s", async (_, args, line, usage) => {
    const run = await gateway(args);
    expect(run.code).toBe(64);
    expect(run.stderr.split("\n")[0]).toBe(line);
    expect(run.stderr).toContain(usage);
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.stdout).toBe("");
  });
});
