/**
 * `GET /conditions`: the operational conditions that hold right now on this instance (a failing
 * or disabled destination, a spike of verification failures, an unwritable store), as the
 * console's banner shows them. Same access as the event log.
 */
import type { H3 } from "h3";
import { type EventsAccessDeps, requireEventsAccess } from "../auth/events-access.ts";
import type { OperationalEvents } from "./create-operational-events.ts";

/** Adds `GET /conditions` to `app` (an empty list when operational events are off). */
export function registerConditionsRoute(app: H3, ctx: EventsAccessDeps, events: OperationalEvents | undefined): void {
  app.get("/conditions", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return { conditions: events?.conditions() ?? [] };
  });
}
