/**
 * The sqlite store's directory as only the gateway may read it: created one level at a time
 * with mode 0700 (Node's recursive mkdir never returns under a parent such as `/proc`, issue
 * 29), its mode set to 0700 and every file in it to 0600 on each open (raw bodies and personal
 * data live there). Each failure is a `StoreDirError` saying what is wrong with the directory.
 */
import { constants } from "node:fs";
import { access, chmod, mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** The store directory cannot be used; `message` says why, without the directory's field name. */
export class StoreDirError extends Error {
  override readonly name = "StoreDirError";
  constructor(
    readonly dir: string,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const codeOf = (error: unknown) => (error as { code?: string }).code;

/**
 * What stops `dir` from being used as a store directory, found without creating anything (for
 * `gateway validate`): a file in its place, or a parent that is a file, missing and not
 * creatable, or not writable. Undefined when it can be used (or created).
 */
export async function inspectStoreDir(dir: string): Promise<string | undefined> {
  let path = resolve(dir);
  for (;;) {
    const found = await stat(path).catch((error: unknown) => codeOf(error) ?? "error");
    if (typeof found !== "string") {
      if (!found.isDirectory()) {
        return path === resolve(dir) ? `${dir} is a file, not a directory` : `${path} (a parent of ${dir}) is a file`;
      }
      const writable = await access(path, constants.W_OK | constants.X_OK).then(
        () => true,
        () => false,
      );
      if (!writable) return `${path} is not writable by this user`;
      return undefined;
    }
    if (found !== "ENOENT") return `${path} cannot be read (${found})`;
    const parent = dirname(path);
    if (parent === path) return `${dir} cannot be created`;
    path = parent;
  }
}

/** Creates `dir` (and its missing parents) level by level; sets it to 0700 and its files to 0600. */
export async function preparePrivateDir(dir: string): Promise<void> {
  const absolute = resolve(dir);
  const missing: string[] = [];
  for (let path = absolute; ; path = dirname(path)) {
    const found = await stat(path).catch((error: unknown) => codeOf(error) ?? "error");
    if (typeof found !== "string") {
      if (!found.isDirectory()) {
        throw new StoreDirError(
          dir,
          path === absolute ? `${dir} is a file, not a directory` : `${path} (a parent of ${dir}) is a file`,
          "ENOTDIR",
        );
      }
      break;
    }
    if (found !== "ENOENT") throw new StoreDirError(dir, `${path} cannot be read (${found})`, found);
    if (dirname(path) === path) throw new StoreDirError(dir, `${dir} cannot be created`, found);
    missing.unshift(path);
  }
  for (const path of missing) {
    try {
      // Parents are created 0700 too: nothing the gateway creates is for other users.
      await mkdir(path, { mode: DIR_MODE });
    } catch (error) {
      const code = codeOf(error);
      if (code === "EEXIST") continue;
      throw new StoreDirError(dir, `${dir} cannot be created (${code ?? String(error)} at ${path})`, code);
    }
  }
  await restrictPrivateDir(dir);
}

/** Sets `dir` to 0700 and each file directly in it to 0600 (files created since: by the umask, or again here). */
export async function restrictPrivateDir(dir: string): Promise<void> {
  const refuse = (error: unknown) => {
    const code = codeOf(error);
    throw new StoreDirError(dir, `${dir}: its permissions cannot be set (${code ?? String(error)})`, code);
  };
  await chmod(dir, DIR_MODE).catch(refuse);
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(refuse)) {
    // A file removed meanwhile (a WAL at its checkpoint) needs no mode.
    if (entry.isFile()) {
      await chmod(join(dir, entry.name), FILE_MODE).catch((error) => codeOf(error) === "ENOENT" || refuse(error));
    }
  }
  await access(dir, constants.W_OK | constants.X_OK).catch((error: unknown) => {
    throw new StoreDirError(dir, `${dir} is not writable by this user`, codeOf(error));
  });
}
