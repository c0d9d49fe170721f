/**
 * The failures a new user meets, each answered with one clear line and no stack trace (issue 19):
 * gateway not reachable (trigger, listen), port in use (the gateway's or the emulators'), missing
 * secret (where it was looked for), config errors (one line per field), and `trigger` naming the
 * secret it signs with: the environment, or the zero-config gateway's development secret, never
 * that secret for a gateway started with --config. Run as typed against real processes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import {
  closedPort,
  closedPortPair,
  gateway,
  holdPort,
  portOf,
  release,
  STACK_LINE,
  scratchDir,
} from "./cli-fixtures.ts";

/** Exit 1, exactly one line on stderr starting with `prefix`, no stack. */
function expectOneLine(run: { code: number | null; stderr: string }, prefix: string) {
  expect(run.stderr).not.toMatch(STACK_LINE);
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(run.stderr.startsWith(prefix)).toBe(true);
  expect(run.code).toBe(1);
}

describe("gateway not reachable", () => {
  it("trigger: names the URL and what to do", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const run = await gateway(["trigger", "esign", "agreement.completed", "--url", url], {
      env: { ESIGN_WEBHOOK_SECRET: "whsec_esign_0123456789abcdef" },
    });
    expectOneLine(run, `gateway trigger: gateway not reachable at ${url} (ECONNREFUSED)`);
    expect(run.stderr).toContain("--url");
    expect(run.stdout).toBe("signing with ESIGN_WEBHOOK_SECRET from the environment\n");
  });

  it("listen: names the URL", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const run = await gateway(["listen", url, "--forward-to", "http://127.0.0.1:9999/hook", "--key", "k_0123456789"], {
      cwd: await scratchDir(),
    });
    expectOneLine(run, `gateway listen: gateway not reachable at ${url} (ECONNREFUSED)`);
  });
});

describe("missing credential", () => {
  it("listen: names every place it looked", async () => {
    const run = await gateway(["listen", "http://127.0.0.1:8787", "--forward-to", "http://127.0.0.1:9999/hook"], {
      cwd: await scratchDir(),
    });
    expectOneLine(
      run,
      "gateway listen: no credential: looked for --key, --token, GATEWAY_ADMIN_KEY (or GATEWAY_API_KEY) and .data/dev-secrets.json",
    );
  });
});

describe("port in use", () => {
  it("the gateway's port (a second `npm start`): says so and names --port", async () => {
    const busy = await holdPort();
    try {
      const port = portOf(busy!);
      const run = await gateway(["serve", "--port", String(port)], { cwd: await scratchDir() });
      expectOneLine(run, `gateway serve: port ${port} on 127.0.0.1 is in use (the gateway's port`);
      expect(run.stderr).toContain("--port <n>");
    } finally {
      await release(busy);
    }
  });

  it("the emulators' port (gateway port + 1): says whose it is, --port and GATEWAY_EMULATORS=off", async () => {
    // A free port whose successor is busy (below the kernel's ephemeral range: nothing takes the
    // port itself meanwhile).
    let busy: Awaited<ReturnType<typeof holdPort>>;
    let port = 0;
    for (let tries = 0; !busy && tries < 20; tries++) {
      port = await closedPortPair();
      busy = await holdPort(port + 1);
    }
    try {
      const run = await gateway(["serve", "--port", String(port)], { cwd: await scratchDir() });
      expectOneLine(run, `gateway serve: port ${port + 1} on 127.0.0.1 is in use (the emulators' port`);
      expect(run.stderr).toContain("--port <n>");
      expect(run.stderr).toContain("GATEWAY_EMULATORS=off");
    } finally {
      await release(busy);
    }
  });

  it("a configured gateway's port", async () => {
    const busy = await holdPort();
    const dir = await scratchDir();
    try {
      const port = portOf(busy!);
      const config = {
        server: { host: "127.0.0.1", port },
        store: { driver: "memory" },
        sources: [{ id: "esign", service: "esign", secrets: ["whsec_esign_0123456789abcdef"] }],
      };
      await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
      const run = await gateway(["serve", "--config", "gateway.json"], { cwd: dir });
      expectOneLine(run, `gateway serve: port ${port} on 127.0.0.1 is in use (the gateway's port`);
    } finally {
      await release(busy);
    }
  });

  it("gateway emulate's port", async () => {
    const busy = await holdPort();
    try {
      const port = portOf(busy!);
      const run = await gateway(["emulate", "--port", String(port)]);
      expectOneLine(run, `gateway emulate: port ${port} on 127.0.0.1 is in use (the emulators' port)`);
    } finally {
      await release(busy);
    }
  });
});

describe("config errors: one line per field", () => {
  it("serve --config with two bad fields", async () => {
    const dir = await scratchDir();
    const config = {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "fax", secrets: ["whsec_esign_0123456789abcdef"], toleranceSeconds: "x" }],
    };
    await writeFile(join(dir, "bad.json"), JSON.stringify(config));
    const run = await gateway(["serve", "--config", "bad.json"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(STACK_LINE);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe("invalid configuration:");
    expect(lines.slice(1).every((line) => line.startsWith("  - sources.0."))).toBe(true);
    expect(lines.some((line) => line.startsWith("  - sources.0.service:"))).toBe(true);
    expect(lines.some((line) => line.startsWith("  - sources.0.toleranceSeconds:"))).toBe(true);
  });
});

describe("trigger: which secret it signs with", () => {
  let target: GatewayProcess;
  beforeAll(async () => {
    target = await startGatewayProcess();
  });
  afterAll(async () => {
    await target?.kill();
  });

  /** A zero-config working directory whose `.data/dev-secrets.json` holds `esign` as the e-sign secret. */
  async function zeroConfigDir(esign: string) {
    const dir = await scratchDir();
    await mkdir(join(dir, ".data"));
    const secrets = { ESIGN_WEBHOOK_SECRET: esign, STAFFING_WEBHOOK_SECRET: "x", GATEWAY_ADMIN_KEY: "y" };
    await writeFile(join(dir, ".data", "dev-secrets.json"), JSON.stringify(secrets));
    return dir;
  }

  it("the environment variable the source references, named (never the secret)", async () => {
    const dir = await scratchDir();
    const config = { sources: [{ id: "esign", service: "esign", secrets: ["${MY_ESIGN_SECRET}"] }] };
    await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
    const run = await gateway(
      ["trigger", "esign", "agreement.completed", "--config", "gateway.json", "--url", target.url],
      {
        cwd: dir,
        env: { MY_ESIGN_SECRET: target.secrets.esign },
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe("signing with MY_ESIGN_SECRET from the environment");
    expect(run.stdout).toMatch(/-> 202 \{"id":"evt_/);
    expect(run.stdout + run.stderr).not.toContain(target.secrets.esign);
  });

  it("the zero-config gateway's development secret when the variable is unset, said so", async () => {
    const dir = await zeroConfigDir(target.secrets.esign);
    const run = await gateway(["trigger", "esign", "agreement.completed", "--url", target.url], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe(
      "signing with ESIGN_WEBHOOK_SECRET of .data/dev-secrets.json (the zero-config gateway's development secret; ESIGN_WEBHOOK_SECRET is unset)",
    );
    expect(run.stdout).toMatch(/-> 202 /);
  });

  it("missing secret, zero-config without .data: where it looked", async () => {
    const run = await gateway(["trigger", "staffing", "staffing.completed", "--url", target.url], {
      cwd: await scratchDir(),
    });
    expectOneLine(
      run,
      "gateway trigger: missing secret: STAFFING_WEBHOOK_SECRET is not set and .data/dev-secrets.json has none",
    );
  });

  it("missing secret, --config: development secrets are not used even when .data has them", async () => {
    const dir = await zeroConfigDir(target.secrets.esign);
    const config = { sources: [{ id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] }] };
    await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
    const run = await gateway(
      ["trigger", "esign", "agreement.completed", "--config", "gateway.json", "--url", target.url],
      {
        cwd: dir,
      },
    );
    expectOneLine(
      run,
      "gateway trigger: missing secret: ESIGN_WEBHOOK_SECRET is not set (sources.0.secrets.0 of gateway.json reads it)",
    );
    expect(run.stdout).toBe("");
  });

  it("a secret the gateway does not verify with: the answer, then one line saying so", async () => {
    const run = await gateway(["trigger", "esign", "agreement.completed", "--url", target.url], {
      cwd: await scratchDir(),
      env: { ESIGN_WEBHOOK_SECRET: "whsec_esign_not_the_gateways_one" },
    });
    expectOneLine(
      run,
      "gateway trigger: the gateway refused the signature: it verifies with another secret than ESIGN_WEBHOOK_SECRET",
    );
    expect(run.stdout).toContain('-> 401 {"error":{"code":"invalid_signature"');
  });

  it("a non-JSON answer (a proxy's HTML error page) is summarised, not dumped", async () => {
    const { createServer } = await import("node:http");
    const page = `<!DOCTYPE html><html><body>${"<p>Internal error</p>".repeat(200)}</body></html>`;
    const server = createServer((_req, res) => res.writeHead(500, { "content-type": "text/html" }).end(page));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const run = await gateway(["trigger", "esign", "agreement.completed", "--url", url], {
        env: { ESIGN_WEBHOOK_SECRET: "whsec_esign_0123456789abcdef" },
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`-> 500 (text/html, ${page.length} bytes: not a gateway answer`);
      expect(run.stdout).not.toContain("<p>");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
