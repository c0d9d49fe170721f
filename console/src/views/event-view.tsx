/** `/console/events/{id}`: one event on its own page (see event-detail.tsx). */
import { EventDetail } from "./event-detail.tsx";

export function EventView(props: { id: string }) {
  return (
    <main id="main">
      <h1>Event</h1>
      <EventDetail id={props.id} />
    </main>
  );
}
