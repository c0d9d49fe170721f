/**
 * The `gateway` command line (bin/gateway.js runs it through tsx): one citty command per file,
 * `adapters/node/<name>-command.ts`, registered here with one line each and loaded on use.
 * run-cli.ts gives it `--help`, `--version`, exit codes and one-line failures.
 */
import { defineCommand } from "citty";
import packageJson from "../../package.json" with { type: "json" };
import { runCli } from "./run-cli.ts";

const gateway = defineCommand({
  meta: { name: "gateway", version: packageJson.version, description: packageJson.description },
  subCommands: {
    serve: () => import("./serve-command.ts").then((m) => m.serveCommand),
    validate: () => import("./validate-command.ts").then((m) => m.validateCommand),
    trigger: () => import("./trigger-command.ts").then((m) => m.triggerCommand),
    "hash-key": () => import("./hash-key-command.ts").then((m) => m.hashKeyCommand),
    emulate: () => import("./emulate-command.ts").then((m) => m.emulateCommand),
    listen: () => import("./listen-command.ts").then((m) => m.listenCommand),
    transform: () => import("./transform-command.ts").then((m) => m.transformCommand),
    erase: () => import("./erase-command.ts").then((m) => m.eraseCommand),
    migrate: () => import("./migrate-command.ts").then((m) => m.migrateCommand),
    backup: () => import("./backup-command.ts").then((m) => m.backupCommand),
    restore: () => import("./backup-command.ts").then((m) => m.restoreCommand),
  },
});

await runCli(gateway);
