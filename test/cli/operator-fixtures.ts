/**
 * An operator's first day (issue 29): a production configuration as the docs show it (secrets
 * as `${VAR}` references, an admin key hash, http and email destinations), the environment that
 * sets them, and the checks of the far end: is anything listening on a port, was anything
 * generated in the working directory.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { adminKeyHash } from "../helpers/signed-requests.ts";

export const ADMIN_KEY = `admin_${randomBytes(16).toString("hex")}`;

/** The variables the production config references, all set. */
export function productionEnv(): Record<string, string> {
  return {
    ESIGN_WEBHOOK_SECRET: `whsec_esign_${randomBytes(16).toString("hex")}`,
    STAFFING_WEBHOOK_SECRET: `whsec_staffing_${randomBytes(16).toString("hex")}`,
    GATEWAY_ADMIN_KEY_HASH: adminKeyHash(ADMIN_KEY),
    CRM_URL: "http://127.0.0.1:9/hooks",
    CRM_WHSEC: `whsec_${randomBytes(32).toString("base64")}`,
    SMTP_PASSWORD: "smtp-password-0123",
  };
}

/** A production configuration as docs/configuration.md and docs/fan-out-and-destinations.md show it. */
export function productionConfig(port: number, storeDir = "./store") {
  return {
    server: { host: "127.0.0.1", port },
    store: { driver: "sqlite", dir: storeDir },
    sources: [
      { id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"] },
    ],
    admin: { apiKeyHashes: ["${GATEWAY_ADMIN_KEY_HASH}"] },
    destinations: [
      { id: "crm", type: "http", url: "${CRM_URL}", secrets: ["${CRM_WHSEC}"] },
      {
        id: "ops-mail",
        type: "email",
        host: "smtp.example.com",
        port: 587,
        auth: { user: "gateway", pass: "${SMTP_PASSWORD}" },
        from: "Gateway <gateway@example.com>",
        to: ["ops@example.com"],
      },
    ],
    routes: [{ id: "all", destinations: ["crm", "ops-mail"] }],
    log: { level: "info" },
  };
}

/** Writes `config` as `gateway.json` in `dir`; returns the file name. */
export async function writeConfig(dir: string, config: unknown, name = "gateway.json"): Promise<string> {
  await writeFile(join(dir, name), JSON.stringify(config, null, 2));
  return name;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
