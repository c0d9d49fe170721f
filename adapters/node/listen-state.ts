/**
 * The on-disk state of one `gateway listen` (its cursor and local signing secret), one small
 * JSON file per (gateway, target, filters, format). Every save replaces the file atomically
 * (temp file, fsync, rename, directory fsync), so a listener killed at any instant restarts from
 * either the previous or the new cursor, never from a torn file; the secret survives restarts,
 * so the local app keeps verifying. The file is created readable by its owner only.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import * as v from "valibot";

const ListenStateSchema = v.object({
  version: v.literal(1),
  gateway: v.string(),
  forwardTo: v.string(),
  /** Local signing secret (`whsec_…`), printed at start. */
  secret: v.pipe(v.string(), v.minLength(16)),
  /** Last event log cursor the local app accepted (or the start point). */
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d{1,15}$/))),
});

export type ListenState = v.InferOutput<typeof ListenStateSchema>;

/** Where a listener keeps its state by default: `.gateway-listen/<hash of what it listens to>.json`. */
export function defaultListenStatePath(identity: unknown): string {
  const hash = createHash("sha256").update(JSON.stringify(identity)).digest("hex").slice(0, 16);
  return join(".gateway-listen", `${hash}.json`);
}

/** A fresh Standard Webhooks secret (also used as the HMAC key of `--format upstream`). */
export function generateListenSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** Reads the state; undefined when there is none. Throws on a file that is not a valid state. */
export async function loadListenState(path: string): Promise<ListenState | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed = v.safeParse(ListenStateSchema, JSON.parse(text));
  if (!parsed.success) throw new Error(`${path}: not a gateway listen state file (${parsed.issues[0].message})`);
  return parsed.output;
}

/** Replaces the state file atomically and durably. */
export async function saveListenState(path: string, state: ListenState): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  const file = await open(temp, "w", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(state)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
