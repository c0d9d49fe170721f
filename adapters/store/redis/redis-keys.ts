/**
 * Key layout of the Redis-backed drivers. Every key starts with one hash tag, `{<prefix>}`, so
 * that all keys of one gateway live in one Redis Cluster slot and the multi-key Lua scripts can
 * run on a cluster (docs/several-instances.md#how-far-redis-scales, Redis Cluster).
 * Caller-supplied parts
 * (dedupe keys, kv keys, index values) are percent-encoded, so no value can forge another key.
 */

/** The keys of one gateway's data under `prefix`. */
export function createKeyLayout(prefix: string) {
  const root = `{${prefix}}:`;
  const enc = encodeURIComponent;
  return {
    root,
    /** The store version of this key layout (src/store/store-version.ts); absent: version 1. */
    version: `${root}version`,
    /** Applied migration steps: version -> JSON `{ description, release, applied_at }`. */
    migrations: `${root}migrations`,
    /** The global event log sequence (one counter for every instance). */
    seq: `${root}seq`,
    /** Event hash by id: `s` seq, `j` record JSON, `x` its index keys, `t` type. */
    eventPrefix: `${root}ev:`,
    event: (id: string) => `${root}ev:${enc(id)}`,
    mark: (dedupeKey: string) => `${root}mark:${enc(dedupeKey)}`,
    kv: (key: string) => `${root}kv:${enc(key)}`,
    /** Every event by seq. */
    log: `${root}log`,
    /** Every event by receive time (retention). */
    time: `${root}time`,
    /** Known event types (type globs expand over it). */
    types: `${root}types`,
    typeIndexPrefix: `${root}ix:type:`,
    bySource: (v: string) => `${root}ix:src:${enc(v)}`,
    byType: (v: string) => `${root}ix:type:${enc(v)}`,
    bySubject: (v: string) => `${root}ix:sub:${enc(v)}`,
    byExternalId: (v: string) => `${root}ix:ext:${enc(v)}`,
    /** Pub/sub channel of append wake-ups. */
    wakeChannel: `${root}wake`,
    outbox: {
      cursor: `${root}ob:cursor`,
      counts: `${root}ob:counts`,
      active: `${root}ob:active`,
      due: `${root}ob:due`,
      done: `${root}ob:done`,
      destinationStates: `${root}ob:dstates`,
      recordPrefix: `${root}ob:r:`,
      record: (eventId: string, destinationId: string) => `${root}ob:r:${enc(eventId)}:${enc(destinationId)}`,
      destPrefix: `${root}ob:dest:`,
      byDestination: (destinationId: string) => `${root}ob:dest:${enc(destinationId)}`,
      eventPrefix: `${root}ob:ev:`,
      byEvent: (eventId: string) => `${root}ob:ev:${enc(eventId)}`,
      /** Unfinished records of one (destination, subject) by seq: per-subject ordering. */
      bySubject: (destinationId: string, subject: string) => `${root}ob:subj:${enc(destinationId)}:${enc(subject)}`,
      /** Subject set key -> `<owner>|<until>`. */
      subjectOwners: `${root}ob:sowners`,
    },
  };
}

export type KeyLayout = ReturnType<typeof createKeyLayout>;
