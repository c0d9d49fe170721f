/**
 * Cursors of the live stream. A cursor is the event log position (`seq`) of the last event a
 * subscriber has seen, written as a decimal string and meant to be treated as opaque. Resuming
 * from a cursor is possible while every event after it is still in the event log; a cursor from
 * before the oldest retained event (retention purged what followed it) or beyond the newest one
 * (another store, or a reset one) is refused with a clear error instead of a silent gap.
 */
import type { StoreDriver } from "../store/contract.ts";

const CURSOR = /^\d{1,15}$/;

/** The cursor of an event log position. */
export function formatCursor(seq: number): string {
  return String(seq);
}

/** Parses a cursor; undefined when it is not one. */
export function parseCursor(text: string): number | undefined {
  return CURSOR.test(text) ? Number(text) : undefined;
}

export type CursorCheck =
  | { ok: true }
  | { ok: false; code: "cursor_expired" | "cursor_ahead"; message: string; details: Record<string, string> };

/** Decides whether the events after `since` can all still be read from the journal. */
export async function checkResumable(store: StoreDriver, since: number): Promise<CursorCheck> {
  const [oldest] = await store.readAfter(0, 1);
  const latest = await store.lastSeq();
  if (since > latest) {
    return {
      ok: false,
      code: "cursor_ahead",
      message: "the cursor is ahead of the journal (was the store reset?); reconnect without a cursor",
      details: { cursor: formatCursor(since), latest: formatCursor(latest) },
    };
  }
  // Positions are consecutive, so an event between the cursor and the oldest retained one, or
  // any event after the cursor when nothing is retained, was purged.
  const purged = oldest ? since < oldest.seq - 1 : since < latest;
  if (purged) {
    return {
      ok: false,
      code: "cursor_expired",
      message: "events after this cursor were purged by retention; reconnect without a cursor and reload state",
      details: { cursor: formatCursor(since), oldestResumable: formatCursor(oldest ? oldest.seq - 1 : latest) },
    };
  }
  return { ok: true };
}
