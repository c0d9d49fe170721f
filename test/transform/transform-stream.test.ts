/**
 * A stream destination's transform in a gateway process, as a WebSocket subscriber sees it:
 * the event frames carry the transform's payload, `null` sends no frame, and a subscriber
 * resuming with `since=` gets the same transformed frames from the journal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Frame,
  openReadyWs,
  type StreamGateway,
  startStreamGateway,
  syncClients,
  type WsClient,
} from "../stream/stream-fixtures.ts";

let gw: StreamGateway;
const clients: WsClient[] = [];

beforeAll(async () => {
  gw = await startStreamGateway({
    edit(config) {
      config.destinations[0].transform = {
        code: "export default (e) => (e.type === 'agreement.declined' ? null : { kind: e.type, id: e.id });",
      };
    },
  });
});

afterAll(async () => {
  for (const client of clients) client.ws.close();
  await gw?.kill();
});

const events = (frames: Frame[]) => frames.filter((f) => f.type === "event").map((f) => f.event);

describe("transforms on a stream destination", () => {
  it("sends the transform's payload, skips null, and replays the same frames on resume", async () => {
    const live = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
    clients.push(live);
    const start = (live.log.frames[0] as Frame).cursor as string;
    const completed = await gw.postEsign("agreement.completed");
    const declined = await gw.postEsign("agreement.declined");
    const sent = await gw.postEsign("agreement.sent");
    await live.log.waitFor((f) => f.type === "event" && f.event.id === sent, "the last event");
    await syncClients(live);
    const expected = [
      { kind: "agreement.completed", id: completed },
      { kind: "agreement.sent", id: sent },
    ];
    expect(events(live.log.frames)).toEqual(expected);
    expect(events(live.log.frames).map((e) => e.id)).not.toContain(declined);

    // Staffing events routed to the same destination go through the same transform.
    const staffing = await gw.postStaffing("candidate.accepted");
    await live.log.waitFor((f) => f.type === "event" && f.event.id === staffing, "the staffing event");
    const staffingFrame = events(live.log.frames).find((e) => e.id === staffing);
    expect(staffingFrame).toEqual({ kind: "candidate.accepted", id: staffing });

    const resumed = await openReadyWs(gw.wsUrl({ token: gw.keys.ui, since: start }));
    clients.push(resumed);
    await resumed.log.waitFor((f) => f.type === "event" && f.event.id === staffing, "the replayed events");
    await syncClients(resumed);
    expect(events(resumed.log.frames)).toEqual([...expected, { kind: "candidate.accepted", id: staffing }]);
  });
});
