/**
 * One owner per journal (and per outbox log): a lock file holding the owner's pid, plus a
 * registry of the lock files this process holds (a pid says nothing about two stores in one process).
 *
 * A lock whose pid is not alive is stale (the owner was killed) and is taken over. A lock naming
 * our own pid that this process does not hold is stale too: in a container the restarted gateway
 * often gets the pid its killed predecessor had.
 */
import { open, readFile, realpath, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

const LOCK = "LOCK";
const held = new Set<string>();

/** Takes the journal in `dir` for this process; resolves to the function that gives it back. */
export function acquireJournalLock(dir: string): Promise<() => Promise<void>> {
  return acquireLockFile(dir, LOCK, "journal");
}

/**
 * Takes the lock file `fileName` in `dir` for this process (`what` names the store in errors);
 * resolves to the function that gives it back.
 */
export async function acquireLockFile(dir: string, fileName: string, what: string): Promise<() => Promise<void>> {
  const path = join(await realpath(dir), fileName);
  const key = path;
  if (held.has(key)) throw new Error(`the ${what} in ${dir} is already open in this process`);
  held.add(key);
  try {
    if (!(await createExclusively(path))) {
      const owner = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10);
      if (owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(`the ${what} in ${dir} is in use by process ${owner} (lock file ${path})`);
      }
      // Stale. Two processes taking over the same stale lock at the same instant could both
      // succeed; the re-read narrows that window, it does not close it.
      await writeFile(path, String(process.pid));
      if ((await readFile(path, "utf8")) !== String(process.pid)) {
        throw new Error(`the ${what} in ${dir} was taken over by another process while starting`);
      }
    }
  } catch (error) {
    held.delete(key);
    throw error;
  }
  return async () => {
    held.delete(key);
    const owner = await readFile(path, "utf8").catch(() => "");
    if (owner === String(process.pid)) await unlink(path).catch(() => {});
  };
}

/** Creates the lock file only if it does not exist; false when it exists. */
async function createExclusively(path: string): Promise<boolean> {
  try {
    const handle = await open(path, "wx");
    try {
      await handle.writeFile(String(process.pid));
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
