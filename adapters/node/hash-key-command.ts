/**
 * `gateway hash-key [<apiKey> | -]`: prints `sha256:<hex>` of an API key, exactly the value
 * config `apiKeyHashes` and `GATEWAY_ADMIN_KEY_HASH` take. With `-` or no argument and a piped
 * stdin it reads the key from stdin, so the key stays out of shell history.
 */
import { createHash } from "node:crypto";
import { defineCommand } from "citty";
import { UsageError } from "./cli-errors.ts";

/** Reads all of stdin as UTF-8. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export const hashKeyCommand = defineCommand({
  meta: {
    name: "hash-key",
    description: "Print the sha256:<hex> hash of an API key (the value apiKeyHashes and GATEWAY_ADMIN_KEY_HASH take)",
  },
  args: {
    key: {
      type: "positional",
      required: false,
      description: "The API key; `-` (or nothing, with a pipe) reads it from stdin: printf %s KEY | gateway hash-key -",
    },
  },
  async run({ args }) {
    let key = args.key;
    if (key === undefined || key === "-") {
      if (key === undefined && process.stdin.isTTY) {
        throw new UsageError(
          "no key: pipe it on stdin (printf %s KEY | gateway hash-key -) or pass it as the argument",
        );
      }
      // One trailing newline is the shell's (`echo key |`), not part of the key.
      key = (await readStdin()).replace(/\r?\n$/, "");
    } else {
      console.error("note: a key given as an argument stays in your shell history; `gateway hash-key -` reads stdin");
    }
    if (key.length === 0) throw new UsageError("the key is empty");
    console.log(`sha256:${createHash("sha256").update(key).digest("hex")}`);
  },
});
