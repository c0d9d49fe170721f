/**
 * Per-subject ordering within one destination: of the not-yet-final deliveries of a subject,
 * only the oldest (lowest event log seq) may be attempted. A failing head therefore holds back
 * its own subject and nothing else. Deliveries without a subject are never held.
 */

interface Keyed {
  eventId: string;
  seq: number;
  subject?: string;
}

export interface SubjectOrder {
  add(record: Keyed): void;
  remove(record: Keyed): void;
  /** True when `record` may be attempted now as far as ordering goes. */
  isHead(record: Keyed): boolean;
  /** The event id at the head of `subject`, if any. */
  headOf(subject: string | undefined): string | undefined;
}

/** Creates the ordering of one destination; `enabled` false makes every record a head. */
export function createSubjectOrder(enabled: boolean): SubjectOrder {
  const subjects = new Map<string, Keyed[]>();
  if (!enabled) return { add() {}, remove() {}, isHead: () => true, headOf: () => undefined };
  return {
    add(record) {
      if (record.subject === undefined) return;
      let list = subjects.get(record.subject);
      if (!list) {
        list = [];
        subjects.set(record.subject, list);
      }
      if (list.some((k) => k.eventId === record.eventId)) return;
      let at = list.length;
      while (at > 0 && (list[at - 1] as Keyed).seq > record.seq) at--;
      list.splice(at, 0, { eventId: record.eventId, seq: record.seq });
    },
    remove(record) {
      if (record.subject === undefined) return;
      const list = subjects.get(record.subject);
      if (!list) return;
      const at = list.findIndex((k) => k.eventId === record.eventId);
      if (at !== -1) list.splice(at, 1);
      if (list.length === 0) subjects.delete(record.subject);
    },
    isHead(record) {
      if (record.subject === undefined) return true;
      const head = subjects.get(record.subject)?.[0];
      return head === undefined || head.eventId === record.eventId;
    },
    headOf(subject) {
      return subject === undefined ? undefined : subjects.get(subject)?.[0]?.eventId;
    },
  };
}
