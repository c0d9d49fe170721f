/**
 * The mark of an erased event's tombstone (src/lifecycle/erase-events.ts): what readers of the
 * log (delivery attempts, the event log API) check to treat it as erased.
 */
import type { EventRecord } from "./contract.ts";

/** The mark of an erased event (in `marks`, and what `GET /events/{id}` shows as its state). */
export const ERASED_MARK = "erased";

/** True for the tombstone of an erased event. */
export function isErased(record: EventRecord): boolean {
  return record.marks.includes(ERASED_MARK);
}
