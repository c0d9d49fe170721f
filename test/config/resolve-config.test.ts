/**
 * resolveConfig: defaults, `${VAR}` interpolation, and errors that name the exact field path and
 * the expectation (never a secret's value); plus the CLI refusing a bad config before listening.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import defaultConfig from "../../config/default.ts";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";

const SECRET_A = "esign_secret_value_0123456789";
const SECRET_B = "staffing_secret_value_0123456789";
const HASH = `sha256:${"ab".repeat(32)}`;

const minimal = () => ({
  sources: [
    { id: "esign", service: "esign", secrets: [SECRET_A] },
    { id: "staffing", service: "staffing", secrets: [SECRET_B] },
  ],
});

/** The problems a config produces; fails the test when it resolves. */
function problemsOf(raw: unknown, env: Record<string, string | undefined> = {}): string[] {
  try {
    resolveConfig(raw, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("expected a ConfigError");
}

describe("defaults", () => {
  it("fills every optional field", () => {
    const config = resolveConfig(minimal(), {});
    expect(config).toMatchObject({
      server: { host: "127.0.0.1", port: 8787 },
      store: { driver: "sqlite", dir: ".data" },
      admin: { apiKeyHashes: [] },
      retentionDays: 30,
      claimTtlSeconds: 30,
      log: { level: "info" },
    });
    // The defences of docs/security-and-deployment.md#what-protects-what are on by default.
    expect(config.ingress).toEqual({
      failedVerificationLimit: {
        maxFailures: 20,
        windowSeconds: 60,
        blockSeconds: 60,
        concurrentReads: 2,
        allowAddresses: [],
      },
      maxBodyBytesInFlight: 64 * 1024 * 1024,
    });
    expect(config.metrics).toEqual({
      bearerTokenHashes: [],
      allowAddresses: ["127.0.0.1", "::1", "::ffff:127.0.0.1"],
    });
    expect(config.sources).toEqual([
      {
        id: "esign",
        service: "esign",
        secrets: [SECRET_A],
        toleranceSeconds: 300,
        dedupeWindowSeconds: 72 * 3600,
        bodyLimitBytes: 1024 * 1024,
        identity: "delivery-id",
        bodyTimeoutMs: 30_000,
      },
      {
        id: "staffing",
        service: "staffing",
        secrets: [SECRET_B],
        toleranceSeconds: 300,
        dedupeWindowSeconds: 72 * 3600,
        bodyLimitBytes: 1024 * 1024,
        identity: "delivery-id",
        bodyTimeoutMs: 30_000,
      },
    ]);
  });

  it("keeps given values and fills the rest of a partial object", () => {
    const raw = { ...minimal(), server: { port: 0 }, store: { driver: "disk" } };
    const config = resolveConfig(raw, {});
    expect(config.server).toEqual({
      host: "127.0.0.1",
      port: 0,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      requestTimeoutMs: 300_000,
      maxConnections: 10_000,
      // Off by default: behind a load balancer one address is every client (issue 18).
      maxConnectionsPerAddress: undefined,
      trustProxy: false,
    });
    expect(config.store).toEqual({ driver: "disk", dir: ".data" });
  });

  it("does not mutate the caller's object", () => {
    const raw = { ...minimal(), admin: { apiKeyHashes: ["${HASH}"] } };
    const before = structuredClone(raw);
    resolveConfig(raw, { HASH });
    expect(raw).toEqual(before);
  });

  it("resolves the shipped default config once its variables are set", () => {
    const config = resolveConfig(defaultConfig, {
      ESIGN_WEBHOOK_SECRET: SECRET_A,
      STAFFING_WEBHOOK_SECRET: SECRET_B,
      GATEWAY_ADMIN_KEY_HASH: HASH,
    });
    expect(config.sources.map((s) => [s.id, s.service, s.secrets])).toEqual([
      ["esign", "esign", [SECRET_A]],
      ["staffing", "staffing", [SECRET_B]],
    ]);
    expect(config.admin.apiKeyHashes).toEqual([HASH]);
  });
});

describe("${VAR} interpolation", () => {
  it("replaces whole values, parts of values and several references", () => {
    const raw = {
      server: { host: "${HOST}" },
      store: { driver: "disk", dir: "/var/lib/${APP}/${ENVIRONMENT}" },
      sources: [{ id: "esign", service: "esign", secrets: ["${A}", "prefix-${B}"] }],
    };
    const config = resolveConfig(raw, { HOST: "::1", APP: "gw", ENVIRONMENT: "prod", A: SECRET_A, B: SECRET_B });
    expect(config.server.host).toBe("::1");
    expect(config.store).toEqual({ driver: "disk", dir: "/var/lib/gw/prod" });
    expect(config.sources[0]?.secrets).toEqual([SECRET_A, `prefix-${SECRET_B}`]);
  });

  it("leaves `$VAR` without braces and non-string values alone", () => {
    const raw = { ...minimal(), store: { driver: "disk", dir: "$HOME/data" }, retentionDays: 7 };
    const config = resolveConfig(raw, { HOME: "/root" });
    expect(config.store).toEqual({ driver: "disk", dir: "$HOME/data" });
    expect(config.retentionDays).toBe(7);
  });

  it.each<[string, Record<string, string | undefined>]>([
    ["not set", {}],
    ["empty", { STAFFING_WEBHOOK_SECRET: "" }],
  ])("names the field path of a variable that is %s", (state, env) => {
    const raw = {
      sources: [
        { id: "esign", service: "esign", secrets: [SECRET_A] },
        { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"] },
      ],
    };
    expect(problemsOf(raw, env)).toEqual([
      `sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is ${state}`,
    ]);
  });

  it("lists every missing variable at once", () => {
    const raw = {
      sources: [{ id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] }],
      admin: { apiKeyHashes: ["${GATEWAY_ADMIN_KEY_HASH}"] },
    };
    expect(problemsOf(raw)).toEqual([
      "sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is not set",
      "admin.apiKeyHashes.0: environment variable GATEWAY_ADMIN_KEY_HASH is not set",
    ]);
  });
});

describe("invalid values name the path and the expectation", () => {
  const withSource = (index: number, patch: Record<string, unknown>) => {
    const raw = minimal();
    raw.sources[index] = { ...raw.sources[index], ...patch } as (typeof raw.sources)[number];
    return raw;
  };

  it.each<[string, unknown, RegExp]>([
    [
      "tolerance as a string",
      withSource(0, { toleranceSeconds: "300" }),
      /^sources\.0\.toleranceSeconds: .*Expected number.*"300"/,
    ],
    ["tolerance of zero", withSource(0, { toleranceSeconds: 0 }), /^sources\.0\.toleranceSeconds: .*Expected >=1.*0/],
    ["fractional tolerance", withSource(1, { toleranceSeconds: 2.5 }), /^sources\.1\.toleranceSeconds: .*integer/],
    [
      "unknown service",
      withSource(1, { service: "docusign" }),
      /^sources\.1\.service: expected `esign` or `staffing`, received "docusign"$/,
    ],
    [
      "bad source id",
      withSource(0, { id: "Esign Main" }),
      /^sources\.0\.id: expected an id of lower-case letters.*received "Esign Main"$/,
    ],
    ["no secrets", withSource(0, { secrets: [] }), /^sources\.0\.secrets: expected at least one secret/],
    [
      "unknown identity",
      withSource(1, { identity: "header" }),
      /^sources\.1\.identity: .*"delivery-id" \| "body-sha256"/,
    ],
    [
      "dedupe window under a minute",
      withSource(0, { dedupeWindowSeconds: 59 }),
      /^sources\.0\.dedupeWindowSeconds: .*>=60/,
    ],
    ["unknown key in a source", withSource(0, { secret: "x" }), /^sources\.0\.secret: unknown key "secret"/],
    ["unknown top-level key", { ...minimal(), source: [] }, /^source: unknown key "source"/],
    ["unknown key in server", { ...minimal(), server: { hostname: "x" } }, /^server\.hostname: unknown key "hostname"/],
    [
      "duplicate source ids",
      withSource(1, { id: "esign" }),
      /^sources\.1\.id: expected a unique source id \(duplicate "esign"\)$/,
    ],
    [
      "upper-case admin hash",
      { ...minimal(), admin: { apiKeyHashes: [`sha256:${"AB".repeat(32)}`] } },
      /^admin\.apiKeyHashes\.0: expected `sha256:` followed by 64 lower-case hex digits, received "sha256:ABAB/,
    ],
    [
      "admin hash without prefix",
      { ...minimal(), admin: { apiKeyHashes: ["ab".repeat(32)] } },
      /^admin\.apiKeyHashes\.0: expected `sha256:`/,
    ],
    [
      "unknown store driver",
      { ...minimal(), store: { driver: "redis-cluster" } },
      /^store\.driver: .*"memory" \| "disk".*"redis-cluster"/,
    ],
    ["port out of range", { ...minimal(), server: { port: 70_000 } }, /^server\.port: .*<=65535.*70000/],
    ["unknown log level", { ...minimal(), log: { level: "verbose" } }, /^log\.level: .*"verbose"/],
    ["missing sources", {}, /^sources: expected a value, received none \(this field is required\)$/],
    ["not an object", 42, /^\(root\): .*Expected Object.*42/],
  ])("%s", (_case, raw, expected) => {
    const problems = problemsOf(raw);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(expected);
  });

  it("reports every problem, each with its own path", () => {
    const raw = {
      sources: [{ id: "esign", service: "esign", secrets: [SECRET_A], toleranceSeconds: -1 }, { id: "x" }],
    };
    const problems = problemsOf(raw);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^sources\.0\.toleranceSeconds: /),
        expect.stringMatching(/^sources\.1\.service: /),
        expect.stringMatching(/^sources\.1\.secrets: /),
      ]),
    );
  });

  it.each<[string, unknown]>([
    ["a secret given as a string instead of a list", { sources: [{ id: "a", service: "esign", secrets: SECRET_A }] }],
    ["a secret that is too short", { sources: [{ id: "a", service: "esign", secrets: ["too-short-value"] }] }],
    ["a numeric secret", { sources: [{ id: "a", service: "esign", secrets: [123_456_789_012_345] }] }],
  ])("never echoes a secret: %s", (_case, raw) => {
    const problems = problemsOf(raw).join("\n");
    expect(problems).toMatch(/^sources\.0\.secrets/);
    for (const secret of [SECRET_A, "too-short-value", "123456789012345"]) expect(problems).not.toContain(secret);
  });

  it("the ConfigError message lists the problems", () => {
    const error = (() => {
      try {
        resolveConfig({ sources: "none" }, {});
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/^invalid configuration:\n {2}- sources: /);
  });
});

describe("gateway serve with a bad config", () => {
  const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-config-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs the CLI to completion (bounded); it must exit before listening. */
  function runServe(configPath: string, env: Record<string, string> = {}) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, "serve", "--config", configPath, "--port", "0"],
        { cwd: dir, timeout: 30_000, env: { ...process.env, ...env } },
        (error, stdout, stderr) => resolve({ code: error ? (error.code as number | null) : 0, stdout, stderr }),
      );
    });
  }

  it("exits non-zero and prints the field paths, without the secret", async () => {
    const path = join(dir, "bad.json");
    const config = {
      store: { driver: "memory" },
      sources: [
        { id: "esign", service: "esign", secrets: ["${CLI_TEST_SECRET}"], toleranceSeconds: "soon" },
        { id: "staffing", service: "fax", secrets: ["${CLI_TEST_SECRET}"] },
      ],
    };
    await writeFile(path, JSON.stringify(config));
    const secret = "cli_test_secret_value_0123456789";
    const { code, stdout, stderr } = await runServe(path, { CLI_TEST_SECRET: secret });
    expect(code).not.toBe(0);
    expect(stderr).toContain("sources.0.toleranceSeconds");
    expect(stderr).toContain("sources.1.service: expected `esign` or `staffing`");
    expect(stdout).not.toContain("listening");
    expect(stdout + stderr).not.toContain(secret);
  });

  it("names the path of a missing environment variable", async () => {
    const path = join(dir, "missing-env.json");
    const config = {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: ["${CLI_TEST_UNSET_SECRET}"] }],
    };
    await writeFile(path, JSON.stringify(config));
    const { code, stderr } = await runServe(path);
    expect(code).not.toBe(0);
    expect(stderr).toContain("sources.0.secrets.0: environment variable CLI_TEST_UNSET_SECRET is not set");
  });
});
