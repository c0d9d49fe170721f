/**
 * The expected failures of opening the sqlite store at start-up as the one line `gateway serve`
 * prints (issue 29): another gateway holds the directory, `store.dir` is a file, cannot be
 * created, is not writable, the disk is full. Each names `store.dir` (and the other process when
 * it is known); anything else is rethrown as is (a bug keeps its stack).
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import { StoreLockedError } from "../store/sqlite/open-database.ts";
import { StoreDirError } from "../store/sqlite/private-dir.ts";
import { CliFailure, systemErrorCode } from "./cli-errors.ts";

const FULL = new Set(["ENOSPC", "EFBIG", "EDQUOT", "SQLITE_FULL"]);
const NOT_WRITABLE = new Set(["EACCES", "EPERM", "EROFS", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"]);

/** The code of an error: a Node system error's, or better-sqlite3's `SQLITE_*`. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("SQLITE_")) return code;
  return systemErrorCode(error);
}

/** Rethrows a store failure of `store` as one line naming `store.dir`; anything else as is. */
export function explainStoreError(error: unknown, store: StoreConfig): never {
  throw storeFailure(error, store) ?? error;
}

/** The one line for a store failure of `store`, or undefined when `error` is not one. */
export function storeFailure(error: unknown, store: StoreConfig): CliFailure | undefined {
  if (store.driver !== "sqlite" && store.driver !== "disk") return undefined;
  const dir = store.dir;
  if (error instanceof StoreLockedError) {
    return new CliFailure(`store.dir: ${error.message}, or give this gateway its own store.dir`);
  }
  if (error instanceof StoreDirError) return new CliFailure(`store.dir: ${error.message}`);
  const code = codeOf(error);
  if (code === undefined) return undefined;
  const base = code.replace(/^(SQLITE_[A-Z]+)_.*$/, "$1");
  if (FULL.has(code) || FULL.has(base)) {
    return new CliFailure(`store.dir: ${dir}: the disk is full (${code}); free space or point store.dir elsewhere`);
  }
  if (NOT_WRITABLE.has(code) || NOT_WRITABLE.has(base)) {
    return new CliFailure(`store.dir: ${dir} is not writable by this user (${code})`);
  }
  if (base === "SQLITE_IOERR" || base === "SQLITE_CORRUPT" || base === "SQLITE_NOTADB") {
    return new CliFailure(
      `store.dir: ${dir}: the database cannot be read or written (${code}; is the disk full or a file size limit reached?)`,
    );
  }
  return undefined;
}
