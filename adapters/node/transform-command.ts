/**
 * `gateway transform test <file|builtin> --event <gateway event id> [--url] [--key]`: runs a
 * transform module file, or a built-in (`slack`, `teams`, `discord`), on a recorded event through
 * the gateway's `POST /transforms/test` (src/transform/transform-test-api.ts) and prints the
 * payload, or the error with the transform's console lines (exit code 1).
 */
import { readFile } from "node:fs/promises";
import { defineCommand } from "citty";
import { BUILTIN_TRANSFORMS, type BuiltinTransformName } from "../../src/transform/transform-schema.ts";
import type { TransformTestAnswer } from "../../src/transform/transform-test-api.ts";
import { adminKeyOf } from "./admin-key-env.ts";
import { CliFailure, fetchGateway } from "./cli-errors.ts";

/** Prints one answer; false when the transform failed. */
export function printTransformAnswer(answer: TransformTestAnswer, write: (line: string) => void): boolean {
  for (const line of answer.logs) write(`log: ${line}`);
  if (!answer.ok) {
    write(`transform_error: ${answer.error.message}`);
    return false;
  }
  write(answer.skipped ? "skipped (the transform returned null)" : JSON.stringify(answer.result, null, 2));
  return true;
}

const testCommand = defineCommand({
  meta: { name: "test", description: "Run a transform on a recorded event and print what it makes" },
  args: {
    transform: {
      type: "positional",
      description: `A module file, or a built-in: ${BUILTIN_TRANSFORMS.join(", ")}`,
      required: true,
    },
    event: { type: "string", description: "The gateway event id", required: true },
    url: { type: "string", description: "The gateway", default: "http://127.0.0.1:8787" },
    key: {
      type: "string",
      description: "Admin API key (default GATEWAY_ADMIN_KEY, alias GATEWAY_API_KEY, or the development key)",
    },
    timeout: { type: "string", description: "Time limit per call, ms (default 50)" },
  },
  async run({ args }) {
    const builtin = BUILTIN_TRANSFORMS.includes(args.transform as BuiltinTransformName);
    const body: Record<string, unknown> = { event: args.event };
    if (builtin) body.builtin = args.transform;
    else {
      try {
        body.code = await readFile(args.transform, "utf8");
      } catch (error) {
        const why = (error as { code?: string }).code ?? String(error);
        throw new CliFailure(
          `cannot read ${args.transform} (${why}); name a module file or one of ${BUILTIN_TRANSFORMS.join(", ")}`,
        );
      }
    }
    if (args.timeout !== undefined) body.timeoutMs = Number(args.timeout);
    const base = args.url.replace(/\/$/, "");
    const response = await fetchGateway(`${base}/transforms/test`, base, "Pass its address with --url.", {
      method: "POST",
      headers: { authorization: `Bearer ${(await adminKeyOf(args.key)).value}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => ({}))) as
      | TransformTestAnswer
      | { error?: { code: string; message: string } };
    if (!response.ok || !("logs" in answer)) {
      const error = "error" in answer ? answer.error : undefined;
      throw new CliFailure(`the gateway answered ${response.status}: ${error?.message ?? "no details"}`);
    }
    if (!printTransformAnswer(answer, (line) => console.log(line))) process.exitCode = 1;
  },
});

/** `gateway transform <subcommand>`. */
export const transformCommand = defineCommand({
  meta: { name: "transform", description: "Work with destination transforms" },
  subCommands: { test: testCommand },
});
