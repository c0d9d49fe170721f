/**
 * `gateway validate --config <file> [--workers]`: checks a configuration as `gateway serve` would
 * before it listens (check-config-file.ts), without opening the store or a port. Prints the
 * warnings, then `<file>: valid` (exit 0) or every problem by field path (exit 1). `--workers`
 * checks the file as the Worker's GATEWAY_CONFIG binding, the environment standing for the other
 * bindings (docs/cloudflare-workers.md).
 */
import { defineCommand } from "citty";
import { ConfigError } from "../../src/config/resolve-config.ts";
import { checkConfigFile } from "./check-config-file.ts";

export const validateCommand = defineCommand({
  meta: {
    name: "validate",
    description: "Check a configuration file (schema, ${VAR}, references, transforms, filters) without starting",
  },
  args: {
    config: {
      type: "string",
      valueHint: "file.ts|file.json",
      description: "Configuration file to check",
      required: true,
    },
    workers: {
      type: "boolean",
      description: "Check the file as the Worker's GATEWAY_CONFIG (the environment as its bindings)",
    },
  },
  async run({ args }) {
    const { config, problems, warnings } = await checkConfigFile(
      args.config,
      { ...process.env },
      {
        workers: args.workers === true,
      },
    );
    for (const warning of warnings) console.error(`warning: ${warning}`);
    if (!config) throw new ConfigError(problems);
    const counts = [
      `${config.sources.length} sources`,
      `${config.destinations.length} destinations`,
      `${config.routes.length} routes`,
    ];
    console.log(
      `${args.config}: valid (${counts.join(", ")}${warnings.length ? `, ${warnings.length} warnings` : ""})`,
    );
  },
});
