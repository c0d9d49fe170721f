/**
 * The upgrade path from the old disk store: a `.data` directory holding `journal.log` (events,
 * dedupe marks, shared values) and `outbox.log` (delivery records) is imported into a new
 * SQLite database on the first start of the sqlite driver
 * (docs/storage.md#upgrading-from-the-journal).
 *
 * The old files are read with the old code's own recovery (adapters/store/disk/: the journal's
 * recover-journal.ts and the outbox log's recover-disk-outbox.ts), through a read-only handle: a
 * torn tail is left out of the import and reported, never cut from the old file, and damage to
 * acknowledged data stops the import with the old code's message. The database is built in a temp file and renamed into place
 * only once complete, so an interrupted import leaves no half database behind. The old files
 * stay where they are; the database takes precedence from then on.
 */
import { constants, type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { DeliveryRecord } from "../../../../src/delivery/outbox-contract.ts";
import { createOutboxIndex, type OutboxIndex } from "../../../../src/delivery/outbox-index.ts";
import { deliveryParams, OUTBOX_SQL } from "../../../../src/delivery/sql/outbox-sql.ts";
import type { Logger } from "../../../../src/ops/logger.ts";
import type { EventRecord } from "../../../../src/store/contract.ts";
import type { SummarizeEvent } from "../../../../src/store/match-event-query.ts";
import { EVENT_SQL, eventInsertParams } from "../../../../src/store/sql/event-sql.ts";
import { META, META_SQL, SCHEMA_STATEMENTS, SCHEMA_VERSION } from "../../../../src/store/sql/schema.ts";
import { pragmaOn, retainConnection, statementOn } from "../retained-statements.ts";
import { createJournalIndex } from "./journal-index.ts";
import { parseLine } from "./journal-line.ts";
import { acquireJournalLock, acquireLockFile } from "./journal-lock.ts";
import { type OutboxLine, recoverOutboxLog } from "./recover-disk-outbox.ts";
import { recoverJournal } from "./recover-journal.ts";

/** File names of the old disk store. */
export const OLD_JOURNAL = "journal.log";
export const OLD_OUTBOX = "outbox.log";

export interface ImportReport {
  events: number;
  marks: number;
  values: number;
  deliveries: number;
  /** Bytes of a torn last batch of the journal left out (never acknowledged). */
  journalTornBytes: number;
  /** Bytes of a torn last line of the outbox log left out. */
  outboxTornBytes: number;
}

/**
 * Builds the database file `target` from the old journal in `dir` (and its outbox log when
 * present). Takes the old store's locks while reading, so a gateway of the previous version
 * still running on `dir` makes this fail instead of importing a moving target.
 */
export async function importDiskJournal(
  dir: string,
  target: string,
  now: number,
  summarizeEvent: SummarizeEvent,
  logger?: Logger,
) {
  const releaseJournal = await acquireJournalLock(dir);
  let releaseOutbox: (() => Promise<void>) | undefined;
  const db = retainConnection(new Database(target));
  try {
    releaseOutbox = await acquireLockFile(dir, "outbox.lock", "outbox");
    pragmaOn(db, "synchronous = FULL");
    for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
    const report = await copyInto(db, dir, now, summarizeEvent);
    db.close();
    if (report.journalTornBytes > 0 || report.outboxTornBytes > 0) {
      logger?.warn("old journal had a torn tail (a write that was never acknowledged); it was not imported", {
        journal_bytes_dropped: report.journalTornBytes,
        outbox_bytes_dropped: report.outboxTornBytes,
      });
    }
    logger?.info("imported the old disk journal into the sqlite store", { dir, ...report });
    return report;
  } finally {
    if (db.open) db.close();
    await releaseOutbox?.();
    await releaseJournal();
  }
}

/** A read-only view of `handle` for the old recovery code: it may not cut the old file. */
function readOnly(handle: FileHandle): FileHandle {
  return {
    stat: () => handle.stat(),
    read: handle.read.bind(handle),
    truncate: async () => {},
    sync: async () => {},
  } as unknown as FileHandle;
}

async function copyInto(
  db: Database.Database,
  dir: string,
  now: number,
  summarizeEvent: SummarizeEvent,
): Promise<ImportReport> {
  const journalPath = join(dir, OLD_JOURNAL);
  const handle = await open(journalPath, constants.O_RDONLY);
  try {
    const index = createJournalIndex(summarizeEvent);
    const { size } = await handle.stat();
    const validSize = await recoverJournal(readOnly(handle), journalPath, index.replay);
    index.finishRecovery(now);
    const outbox = createOutboxIndex();
    const outboxTornBytes = await readOldOutbox(dir, outbox);

    const records: { record: EventRecord; externalId: string | undefined }[] = [];
    for (const entry of index.entries) {
      const buffer = Buffer.allocUnsafe(entry.length);
      await handle.read(buffer, 0, entry.length, entry.offset);
      const parsed = parseLine(buffer, 0, entry.length - 1);
      if (!parsed || !("e" in parsed.line)) throw new Error(`${journalPath}: record ${entry.id} is unreadable`);
      records.push({ record: parsed.line.e, externalId: entry.externalId });
    }
    const marks = [...index.marks].filter(([, mark]) => mark.id !== undefined && mark.expiresAt > now);
    const values = [...index.kv].filter(([, item]) => item.expiresAt > now);
    const deliveries: DeliveryRecord[] = [...outbox.all()];
    db.transaction(() => {
      const insertEvent = statementOn(db, EVENT_SQL.insert);
      for (const { record, externalId } of records) insertEvent.run(eventInsertParams(record, externalId));
      const upsertMark = statementOn(db, EVENT_SQL.upsertMark);
      for (const [key, mark] of marks) upsertMark.run(key, mark.id, mark.expiresAt);
      const setValue = statementOn(db, EVENT_SQL.kvSet);
      for (const [key, item] of values) setValue.run(key, item.value, item.expiresAt);
      const save = statementOn(db, OUTBOX_SQL.save);
      for (const record of deliveries) save.run(deliveryParams(record));
      const saveState = statementOn(db, OUTBOX_SQL.saveDestinationState);
      for (const state of outbox.destinationStates.values()) saveState.run(state.id, JSON.stringify(state));
      const raise = statementOn(db, META_SQL.raise);
      raise.run(META.seqFloor, index.lastSeq());
      raise.run(META.cursor, outbox.cursor);
      statementOn(db, META_SQL.set).run(META.schemaVersion, SCHEMA_VERSION);
    })();
    return {
      events: records.length,
      marks: marks.length,
      values: values.length,
      deliveries: deliveries.length,
      journalTornBytes: size - validSize,
      outboxTornBytes,
    };
  } finally {
    await handle.close();
  }
}

/** Replays the old outbox log into `index`; returns the bytes of a torn tail left out (0 when absent). */
async function readOldOutbox(dir: string, index: OutboxIndex): Promise<number> {
  let handle: FileHandle;
  try {
    handle = await open(join(dir, OLD_OUTBOX), constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const valid = await recoverOutboxLog(readOnly(handle), (line) => applyOutboxLine(index, line));
    return size - valid;
  } finally {
    await handle.close();
  }
}

/** The old driver's replay rule (adapters/store/disk/disk-outbox.ts): last write wins. */
function applyOutboxLine(index: OutboxIndex, line: OutboxLine): void {
  if ("c" in line) index.create(line.r, line.c);
  else if ("s" in line) index.save(line.s);
  else if ("d" in line) index.destinationStates.set(line.d.id, line.d);
  else for (const [eventId, destinationId] of line.x) index.remove(eventId, destinationId);
}
