/**
 * Empty states that say what to do next (issue 19): no events yet (how to send one) and no
 * destinations (where they are configured). Marked `data-empty` for the browser tests.
 */
import type { ComponentChildren } from "preact";
import { hasFeature } from "../features.ts";
import { hrefOf } from "../router.ts";
import { Link } from "./link.tsx";

function EmptyState(props: { kind: string; title: string; children: ComponentChildren }) {
  return (
    <section class="empty-state" data-empty={props.kind} aria-label={props.title}>
      <p class="empty-title">{props.title}</p>
      {props.children}
    </section>
  );
}

/** No events (yet, or in the shown range): how to get one. */
export function NoEvents(props: { title: string }) {
  return (
    <EmptyState kind="events" title={props.title}>
      <ul class="steps">
        {hasFeature("test-events") && (
          <li>
            <Link href={hrefOf("/send")}>Send a test event</Link>: the gateway signs a documented sample and receives it
            like any webhook.
          </li>
        )}
        <li>
          From a terminal: <code>npm run gateway -- trigger &lt;source&gt; &lt;event type&gt;</code> sends a signed
          sample (<code>--help</code> lists the options).
        </li>
        <li>
          Or point an upstream's webhooks at <code>/webhooks/&lt;source&gt;</code> on this gateway.
        </li>
      </ul>
    </EmptyState>
  );
}

/** No destinations configured: where they come from. */
export function NoDestinations() {
  return (
    <EmptyState kind="destinations" title="No destinations are configured.">
      <p>
        Destinations receive the events that <code>routes</code> send them (HTTP endpoints, queues, email). Add them
        under <code>destinations</code> and <code>routes</code> in the gateway's configuration file and restart it
        (docs: fan-out and destinations). The live stream needs no destination here.
      </p>
    </EmptyState>
  );
}
