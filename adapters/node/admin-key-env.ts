/**
 * Where the CLI commands that call a running gateway (`erase`, `listen`, `transform test`) find
 * the admin key, in one order: `--key`, then `GATEWAY_ADMIN_KEY` (the one name, as in
 * `GATEWAY_ADMIN_KEY_HASH` and `.data/dev-secrets.json`), then its alias `GATEWAY_API_KEY`
 * (the name `listen` and `transform` read before), then the zero-config gateway's development
 * key. The key itself is never printed; `from` says where it came from.
 */
import { CliFailure } from "./cli-errors.ts";
import { readDevAdminKey } from "./dev-secrets.ts";

/** The canonical variable, and the alias still accepted (docs/cli.md). */
export const ADMIN_KEY_VARIABLE = "GATEWAY_ADMIN_KEY";
export const ADMIN_KEY_ALIAS = "GATEWAY_API_KEY";

const LOOKED = `--key, ${ADMIN_KEY_VARIABLE} (or ${ADMIN_KEY_ALIAS}) and .data/dev-secrets.json`;

/** The admin key and where it was found; `given` is the `--key` flag (or `--token`, named `flag`). */
export async function adminKeyOf(
  given: string | undefined,
  env: Record<string, string | undefined> = process.env,
  flag = "--key",
): Promise<{ value: string; from: string }> {
  if (given) return { value: given, from: flag };
  for (const name of [ADMIN_KEY_VARIABLE, ADMIN_KEY_ALIAS]) {
    const value = env[name];
    if (value) return { value, from: name };
  }
  const dev = await readDevAdminKey();
  if (dev) return { value: dev, from: ".data/dev-secrets.json (development admin key)" };
  throw new CliFailure(`no admin key: looked for ${LOOKED} (the zero-config gateway's); set one`);
}

/** `listen`'s variant: `--token` is a place too, and the message says credential. */
export async function credentialOf(values: { key?: string; token?: string }): Promise<{ value: string; from: string }> {
  const given = values.key ?? values.token;
  try {
    return await adminKeyOf(given, process.env, values.key ? "--key" : "--token");
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    throw new CliFailure(
      `no credential: looked for --key, --token, ${ADMIN_KEY_VARIABLE} (or ${ADMIN_KEY_ALIAS}) and ` +
        ".data/dev-secrets.json (the zero-config gateway's admin key); pass one",
    );
  }
}
