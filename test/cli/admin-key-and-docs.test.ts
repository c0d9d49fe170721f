/**
 * Issue 29 row 9: one admin key variable for every command that calls a running gateway
 * (`GATEWAY_ADMIN_KEY`, alias `GATEWAY_API_KEY`), docs/cli.md lists every command `gateway
 * --help` lists, the docs state the retention interval the code runs, and a webhook posted to
 * an unknown source is logged with the id asked for (bounded, printable).
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAINTENANCE_INTERVAL_MS } from "../../adapters/node/start-gateway.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";
import { gateway, ROOT, STACK_LINE } from "./cli-fixtures.ts";

describe("against a running gateway", () => {
  let target: GatewayProcess;
  beforeAll(async () => {
    const secrets = makeSecrets();
    const config = {
      ...defaultTestConfig("", adminKeyHash(secrets.adminKey)),
      store: { driver: "memory" },
      log: { level: "info" },
    };
    target = await startGatewayProcess({ config, secrets });
  }, 240_000);
  afterAll(async () => {
    await target?.kill();
  });

  it.each(["GATEWAY_ADMIN_KEY", "GATEWAY_API_KEY"])(
    "erase takes the admin key from %s",
    { timeout: 240_000 },
    async (name) => {
      const run = await gateway(["erase", "--subject", "nobody@example.com", "--dry-run", "--url", target.url], {
        env: { [name]: target.secrets.adminKey },
      });
      expect(run.stderr).toBe("");
      expect(run.stdout).toBe("would erase 0 events of nobody@example.com (0 erased before)\n");
      expect(run.code).toBe(0);
    },
  );

  it("erase names the variable a refused key came from", { timeout: 240_000 }, async () => {
    const run = await gateway(["erase", "--subject", "x", "--url", target.url], {
      env: { GATEWAY_ADMIN_KEY: "not_the_admin_key_0123456789" },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^gateway erase: 401 unauthorized: .*\(admin key from GATEWAY_ADMIN_KEY\)\n$/);
  });

  it.each(["GATEWAY_ADMIN_KEY", "GATEWAY_API_KEY"])(
    "transform test takes the admin key from %s",
    { timeout: 240_000 },
    async (name) => {
      const run = await gateway(["transform", "test", "slack", "--event", "evt_missing", "--url", target.url], {
        env: { [name]: target.secrets.adminKey },
      });
      // Past authentication: the gateway looked for the event.
      expect(run.stderr).toBe('gateway transform test: the gateway answered 404: no event "evt_missing" in the log\n');
      expect(run.code).toBe(1);
    },
  );

  it("a webhook for an unknown source is logged with the id asked for, at most 64 printable characters", async () => {
    const asked = [`esing`, `${"x".repeat(100)}\u0007tail`];
    for (const id of asked) {
      const answer = await fetch(`${target.url}/webhooks/${encodeURIComponent(id)}`, { method: "POST", body: "{}" });
      expect(answer.status).toBe(404);
    }
    const logged = () =>
      target.lines
        .filter((line) => line.includes('"msg":"webhook rejected"') && line.includes("unknown_source"))
        .map((line) => JSON.parse(line).requested_source as string);
    for (let i = 0; i < 2000 && logged().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(logged()).toEqual(["esing", `${"x".repeat(64)}…`]);
  });
});

describe("the docs agree with the code", () => {
  it("docs/cli.md documents every command gateway --help lists", { timeout: 240_000 }, async () => {
    const help = await gateway(["--help"]);
    const commands = /USAGE gateway (\S+)/.exec(help.stdout)?.[1]?.split("|") ?? [];
    expect(commands).toContain("validate");
    const page = await readFile(`${ROOT}docs/cli.md`, "utf8");
    for (const command of commands) {
      expect([command, page.includes(`| \`gateway ${command}`)]).toEqual([command, true]);
      expect([command, page.includes(`## \`gateway ${command}`)]).toEqual([command, true]);
    }
    expect(help.stderr).not.toMatch(STACK_LINE);
  });

  it("one retention interval: the docs say what the Node gateway runs", async () => {
    const minutes = MAINTENANCE_INTERVAL_MS / 60_000;
    for (const page of ["docs/data-lifecycle.md", "docs/operations-and-metrics.md"]) {
      const text = await readFile(`${ROOT}${page}`, "utf8");
      expect([page, text.includes(`every ${minutes} minutes`)]).toEqual([page, true]);
      expect([page, /every hour/.test(text)]).toEqual([page, false]);
    }
  });
});
