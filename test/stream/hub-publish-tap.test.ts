/**
 * The publish tap (src/stream/hub-contract.ts `withPublishTap`, src/stream/journal-hub.ts
 * `withJournalPublishTap`): the gateway (its own copy of each recorded event goes to the delivery
 * engine) and the `postgres` hub (its read path holds what it published) add a step to a hub's
 * publish. A hub may be a class instance whose methods live on its prototype and whose state is
 * private: a spread copy of it (`{ ...hub, publish }`) has neither `subscribe` nor `close`. Through
 * the tap every method reaches the hub itself, and `publish` reaches both the hub and the tap, in
 * the order asked for.
 */
import { describe, expect, test } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import { type LiveHub, type RecordedListener, withPublishTap } from "../../src/stream/hub-contract.ts";
import { type JournalHub, withJournalPublishTap } from "../../src/stream/journal-hub.ts";
import { makeRecord } from "../store/sample-records.ts";

/** A hub written as a class: private state, methods and a getter on the prototype. */
class ClassHub implements LiveHub {
  readonly #listeners = new Set<RecordedListener>();
  #closed = false;
  readonly trail: string[] = [];

  get closed(): boolean {
    return this.#closed;
  }

  subscribe(listener: RecordedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(record: EventRecord): void {
    this.trail.push(`hub ${record.seq}`);
    if (this.#closed) return;
    for (const listener of this.#listeners) listener(record);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/** A shared live hub written as a class: `wake` and `caughtUp` count their calls. */
class ClassJournalHub extends ClassHub implements JournalHub {
  #wakes = 0;
  #catchUps = 0;

  get calls(): { wakes: number; catchUps: number } {
    return { wakes: this.#wakes, catchUps: this.#catchUps };
  }

  wake(): void {
    this.#wakes++;
  }

  async caughtUp(): Promise<void> {
    this.#catchUps++;
  }
}

/** Event n as the store hands it to the hub (its seq is n). */
const record = (seq: number): EventRecord => ({ ...makeRecord(seq), seq });

describe("withPublishTap", () => {
  test("a class hub keeps subscribing, publishing and closing through the tap; the tap sees each publish after the hub", async () => {
    const hub = new ClassHub();
    const tapped = withPublishTap(hub, (r) => hub.trail.push(`tap ${r.seq}`));
    const heard: number[] = [];
    const unsubscribe = tapped.subscribe((r) => heard.push(r.seq));

    tapped.publish(record(1));
    tapped.publish(record(2));
    expect(heard).toEqual([1, 2]);
    expect(hub.trail).toEqual(["hub 1", "tap 1", "hub 2", "tap 2"]);

    unsubscribe();
    tapped.publish(record(3));
    expect(heard).toEqual([1, 2]);
    expect(hub.trail.slice(-2)).toEqual(["hub 3", "tap 3"]);

    await tapped.close();
    expect(hub.closed).toBe(true);
  });

  test('"before" gives the tap each record before the hub is told', () => {
    const hub = new ClassHub();
    const tapped = withPublishTap(hub, (r) => hub.trail.push(`tap ${r.seq}`), "before");
    tapped.publish(record(7));
    expect(hub.trail).toEqual(["tap 7", "hub 7"]);
  });

  test("the wrapper holds no copy of the hub's state: what the hub does later is what the wrapper does", async () => {
    const hub = new ClassHub();
    const taps: number[] = [];
    const tapped = withPublishTap(hub, (r) => taps.push(r.seq));
    await hub.close();
    const heard: number[] = [];
    tapped.subscribe((r) => heard.push(r.seq));
    tapped.publish(record(4));
    // The closed hub ignores the publish; the tap still saw it (it is the caller's step).
    expect(heard).toEqual([]);
    expect(taps).toEqual([4]);
  });
});

describe("withJournalPublishTap", () => {
  test("a class journal hub keeps wake and caughtUp through the tap, and publish reaches the hub and the tap", async () => {
    const hub = new ClassJournalHub();
    const tapped = withJournalPublishTap(hub, (r) => hub.trail.push(`tap ${r.seq}`), "before");
    const heard: number[] = [];
    tapped.subscribe((r) => heard.push(r.seq));

    tapped.publish(record(5));
    expect(hub.trail).toEqual(["tap 5", "hub 5"]);
    expect(heard).toEqual([5]);

    tapped.wake();
    tapped.wake();
    await tapped.caughtUp();
    expect(hub.calls).toEqual({ wakes: 2, catchUps: 1 });

    await tapped.close();
    expect(hub.closed).toBe(true);
  });
});
