/**
 * Erasure reaches every copy of a person's data (docs/data-lifecycle.md), through real gateway
 * processes on SQLite, on a real redis-server and on Upstash (REST front over redis-server).
 *
 * A destination's transform logs the participant's e-mail (a unique marker address) and throws
 * `cannot map <email>`: the events dead-letter, the attempt records hold the address (error and
 * console lines), and so do the operational events `gateway.destination.failing` and
 * `gateway.deliveries.dead` (their `last_error`). After an erasure by subject and one by a
 * content filter naming the other address, a byte search finds neither address in any API answer
 * (`/events`, `/events/{id}`, `/destinations/*\/deliveries`, dead letters, `/destinations`,
 * `/conditions`), nor in the SQLite database and its WAL (running and after stop), nor in any
 * Redis key or value (SCAN, then every value by its type). The audit event exists, holds no
 * filter value, and the same selection asked again is answered from it (audited once).
 *
 * The crash case (`kill -9` in the middle of an erasure) is erasure-kill-9.test.ts; both use
 * erasure-harness.ts.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, test } from "vitest";
import {
  apiAnswers,
  cleanUp,
  gatewayEvents,
  get,
  type JsonAnswer,
  post,
  send,
  startSetup,
  storeBytes,
  until,
} from "./erasure-harness.ts";

afterEach(cleanUp);

describe.each(["sqlite", "redis", "upstash"] as const)("erasure reaches every copy (%s store)", (kind) => {
  test("no trace of the address in events, attempt records, dead letters, operational events, the store's bytes", async () => {
    const setup = await startSetup(kind, { failFast: true });
    const tag = randomBytes(6).toString("hex");
    const subjectEmail = `zzsubject${tag}@erasure.example`;
    const filterEmail = `zzfilter${tag}@erasure.example`;
    const keptEmail = `zzkept${tag}@keep.example`;
    const agreement = `ag-${tag}`;
    const subjectIds: string[] = [];
    for (const type of ["agreement.sent", "agreement.viewed", "agreement.signed"]) {
      subjectIds.push(await send(setup, agreement, subjectEmail, type));
    }
    const deadLetter = async (id: string) =>
      until(`dead letter of ${id}`, async () => {
        const event = await get(setup, `/events/${id}`);
        return event.deliveries?.[0]?.state === "dead" ? true : undefined;
      });
    // Every delivery dead-letters, its attempts holding the address (error and console lines);
    // the operational events about the destination quote the subject's address first.
    for (const id of subjectIds) await deadLetter(id);
    const quoted = await until("operational events quoting the address", async () => {
      const events = [
        ...(await gatewayEvents(setup, "gateway.destination.failing")),
        ...(await gatewayEvents(setup, "gateway.deliveries.dead")),
      ];
      return events.some((e) => e.event.type === "gateway.deliveries.dead") ? events : undefined;
    });
    expect(JSON.stringify(quoted)).toContain(`cannot map ${subjectEmail}`);
    const filterIds = [await send(setup, `ag-f1-${tag}`, filterEmail), await send(setup, `ag-f2-${tag}`, filterEmail)];
    const keptId = await send(setup, `ag-k-${tag}`, keptEmail);
    const ids = [...subjectIds, ...filterIds];
    for (const id of [...filterIds, keptId]) await deadLetter(id);
    const before = await get(setup, `/events/${subjectIds[0]}`);
    const attempt = before.deliveries[0].attempts[0];
    expect(attempt.error).toContain(`cannot map ${subjectEmail}`);
    expect(attempt.logs.join("\n")).toContain(subjectEmail);
    // The operational events quote an address too (their last_error).
    const deadEvents = await until("a gateway.deliveries.dead event", async () => {
      const events = await gatewayEvents(setup, "gateway.deliveries.dead");
      const count = events.reduce((sum: number, e: JsonAnswer) => sum + e.event.data.count, 0);
      return count >= ids.length + 1 ? events : undefined;
    });
    expect(JSON.stringify(deadEvents)).toMatch(/cannot map zz/);
    const failing = await gatewayEvents(setup, "gateway.destination.failing");
    expect(failing.length).toBeGreaterThan(0);
    expect(await storeBytes(setup)).toContain(subjectEmail);
    expect(await storeBytes(setup)).toContain(filterEmail);
    expect(await apiAnswers(setup, ids)).toContain(subjectEmail);

    // Erase by subject, then by a filter naming the other address.
    const bySubject = await post(setup, "/events/erase", { subject: `agreements/${agreement}` });
    expect(bySubject.status).toBe(200);
    expect(bySubject.body).toMatchObject({ dryRun: false, events: 3, already_erased: 0 });
    const filterBody = { filter: { data: { participant: { email: filterEmail } } } };
    const byFilter = await post(setup, "/events/erase", filterBody);
    expect(byFilter.status).toBe(200);
    expect(byFilter.body).toMatchObject({ dryRun: false, events: 2, already_erased: 0 });

    // No API answer holds either address; the kept event and its copies are untouched.
    const answers = await apiAnswers(setup, ids);
    expect(answers).not.toContain(subjectEmail);
    expect(answers).not.toContain(filterEmail);
    expect(answers).not.toContain(`zzsubject${tag}`);
    expect(answers).not.toContain(`zzfilter${tag}`);
    const kept = await get(setup, `/events/${keptId}`);
    expect(kept.state).toBe("recorded");
    expect(kept.deliveries[0].attempts[0].error).toContain(`cannot map ${keptEmail}`);
    // What an operator still reads of an erased event's deliveries: states, codes, no texts.
    const scrubbed = await get(setup, `/events/${subjectIds[0]}`);
    expect(scrubbed.state).toBe("erased");
    expect(scrubbed.deliveries[0]).toMatchObject({ state: "dead", last_error: "(erased with the event)" });
    expect(scrubbed.deliveries[0].attempts[0]).toMatchObject({ ok: false, error: "(erased with the event)" });
    expect(scrubbed.deliveries[0].attempts[0].logs).toBeUndefined();
    // A filter's event by the dialect-free filter endpoint finds nothing any more.
    const search = await get(setup, `/events?filter=${encodeURIComponent(JSON.stringify(filterBody.filter))}`);
    expect(search.events).toEqual([]);

    // The audit events: who, when, how many; the subject; a keyed hash, never the filter's value.
    const audits = await gatewayEvents(setup, "gateway.events.erased");
    expect(audits).toHaveLength(2);
    const filterAudit = audits.find((a: JsonAnswer) => a.event.id === byFilter.body.audit_event_id);
    expect(filterAudit.event.data).toMatchObject({
      by: expect.stringMatching(/^admin key sha256:[0-9a-f]{12}…$/),
      selection: { content_filter: true, hash: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) },
      events: 2,
      already_erased: 0,
    });
    const subjectAudit = audits.find((a: JsonAnswer) => a.event.id === bySubject.body.audit_event_id);
    expect(subjectAudit.event.data.gateway_events_scrubbed).toBeGreaterThan(0);
    expect(subjectAudit.event.data.selection).toMatchObject({ subject: `agreements/${agreement}` });
    expect(JSON.stringify(audits)).not.toContain(filterEmail);
    expect(JSON.stringify(audits)).not.toContain(setup.secrets.adminKey);

    // The same selection again: nothing new, the first audit answers. (A tombstone has no content
    // left for a filter to match: the erased events are not counted as `already_erased` here.)
    const again = await post(setup, "/events/erase", { filter: { data: { participant: { email: filterEmail } } } });
    expect(again.body).toEqual({
      dryRun: false,
      events: 0,
      already_erased: 0,
      deliveries_cancelled: 0,
      audit_event_id: byFilter.body.audit_event_id,
    });
    expect(await gatewayEvents(setup, "gateway.events.erased")).toHaveLength(2);

    // The store's bytes: running, then (SQLite) the database and WAL after a clean stop.
    let bytes = await storeBytes(setup);
    expect(bytes).not.toContain(subjectEmail);
    expect(bytes).not.toContain(filterEmail);
    expect(bytes).toContain(keptEmail);
    if (kind === "sqlite") {
      expect(await setup.gateway.kill("SIGTERM")).toBe(0);
      bytes = await storeBytes(setup);
      expect(bytes).not.toContain(`zzsubject${tag}`);
      expect(bytes).not.toContain(`zzfilter${tag}`);
      expect(bytes).toContain(keptEmail);
    }
  }, 240_000);
});
