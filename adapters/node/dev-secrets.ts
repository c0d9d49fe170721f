/**
 * Development secrets for the zero-config start: generated once with a CSPRNG, kept in
 * `<dataDir>/dev-secrets.json` (mode 0600), and used only in zero-config mode, where the
 * environment sets none of the secret variables (zero-config.ts; anywhere else a missing secret
 * stops start-up). Persisted through unstorage's fs driver, imported only when they are needed (a
 * configured gateway never loads unstorage, anymatch and picomatch).
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, readFile } from "node:fs/promises";
import { join } from "node:path";

export interface DevSecrets {
  ESIGN_WEBHOOK_SECRET: string;
  STAFFING_WEBHOOK_SECRET: string;
  /** The admin API key in clear (printed for the developer); config holds only its hash. */
  GATEWAY_ADMIN_KEY: string;
}

const FILE = "dev-secrets.json";

/**
 * The zero-config gateway's development admin key, if `<dataDir>/dev-secrets.json` has one (the
 * CLI's last resort for a credential: listen, erase, transform test). Never creates the file.
 */
export async function readDevAdminKey(dataDir = ".data"): Promise<string | undefined> {
  try {
    const dev = JSON.parse(await readFile(join(dataDir, FILE), "utf8")) as { GATEWAY_ADMIN_KEY?: unknown };
    return typeof dev.GATEWAY_ADMIN_KEY === "string" ? dev.GATEWAY_ADMIN_KEY : undefined;
  } catch {
    return undefined;
  }
}

/** Reads or creates the development secrets of `dataDir`. */
export async function loadDevSecrets(dataDir: string): Promise<DevSecrets> {
  const [{ createStorage }, { default: fsDriver }] = await Promise.all([
    import("unstorage"),
    import("unstorage/drivers/fs"),
  ]);
  const storage = createStorage({ driver: fsDriver({ base: dataDir }) });
  try {
    const existing = (await storage.getItem(FILE)) as DevSecrets | null;
    if (existing?.ESIGN_WEBHOOK_SECRET && existing.STAFFING_WEBHOOK_SECRET && existing.GATEWAY_ADMIN_KEY) {
      return existing;
    }
    const secrets: DevSecrets = {
      ESIGN_WEBHOOK_SECRET: `dev_esign_${randomBytes(24).toString("hex")}`,
      STAFFING_WEBHOOK_SECRET: `dev_staffing_${randomBytes(24).toString("hex")}`,
      GATEWAY_ADMIN_KEY: `dev_admin_${randomBytes(24).toString("hex")}`,
    };
    await storage.setItem(FILE, secrets);
    await chmod(join(dataDir, FILE), 0o600);
    return secrets;
  } finally {
    await storage.dispose();
  }
}

/**
 * Fills the unset variables of `env` from the development secrets; returns the names it filled
 * (empty when the environment provides everything, and then nothing is labelled development).
 */
export async function applyDevSecrets(env: Record<string, string | undefined>, dataDir: string, rawConfig: unknown) {
  const wanted = ["ESIGN_WEBHOOK_SECRET", "STAFFING_WEBHOOK_SECRET", "GATEWAY_ADMIN_KEY_HASH"] as const;
  // Only a configuration that references these variables gets development values for them.
  const text = JSON.stringify(rawConfig) ?? "";
  if (wanted.every((name) => env[name] || !text.includes(`\${${name}}`))) {
    return { filled: [] as string[], secrets: undefined };
  }
  const secrets = await loadDevSecrets(dataDir);
  const filled: string[] = [];
  const values: Record<(typeof wanted)[number], string> = {
    ESIGN_WEBHOOK_SECRET: secrets.ESIGN_WEBHOOK_SECRET,
    STAFFING_WEBHOOK_SECRET: secrets.STAFFING_WEBHOOK_SECRET,
    GATEWAY_ADMIN_KEY_HASH: `sha256:${createHash("sha256").update(secrets.GATEWAY_ADMIN_KEY).digest("hex")}`,
  };
  for (const name of wanted) {
    if (!env[name] && text.includes(`\${${name}}`)) {
      env[name] = values[name];
      filled.push(name);
    }
  }
  return { filled, secrets };
}
