/**
 * Live: events as they arrive over `/ws`, filtered by source / type / subject and a content
 * filter as JSON (kept in the URL, testable on recent events), with pause and resume; after a
 * dropped connection or a pause the stream resumes from the last cursor (no gap, no repeat).
 * Newest first, the last 200 kept.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { NoEvents } from "../components/empty-state.tsx";
import { FilterTestPanel } from "../components/filter-test-panel.tsx";
import { formatTime } from "../components/format.ts";
import { Link } from "../components/link.tsx";
import { LiveConnection, type LiveStatus, splitPatterns } from "../live-socket.ts";
import { hrefOf, navigate, type Route } from "../router.ts";
import type { CloudEvent } from "../types.ts";

const KEEP = 200;

interface Row {
  cursor: string;
  event: CloudEvent;
}

function statusText(status: LiveStatus): string {
  switch (status.state) {
    case "connecting":
      return "Connecting…";
    case "live":
      return "Connected: new events appear as they arrive";
    case "paused":
      return "Paused: new events are kept by the gateway and arrive on resume";
    case "reconnecting":
      return `Connection lost: reconnecting in ${status.inSeconds} s`;
    case "refused":
      return `Refused: ${status.message}`;
  }
}

export function LiveView(props: { route: Route }) {
  const { query } = props.route;
  const filters = {
    source: query.get("source") ?? "",
    type: query.get("type") ?? "",
    subject: query.get("subject") ?? "",
    filter: query.get("filter") ?? "",
  };
  const filterKey = `${filters.source}|${filters.type}|${filters.subject}|${filters.filter}`;
  const [filterText, setFilterText] = useState(filters.filter);
  const [rows, setRows] = useState<Row[]>([]);
  const [status, setStatus] = useState<LiveStatus>({ state: "connecting" });
  const [notice, setNotice] = useState<string | undefined>();
  const connection = useRef<LiveConnection>();

  useEffect(() => {
    setRows([]);
    const live = new LiveConnection(
      {
        source: splitPatterns(filters.source),
        type: splitPatterns(filters.type),
        subject: splitPatterns(filters.subject),
        filter: filters.filter.trim(),
      },
      {
        onEvent: (event, cursor) => setRows((current) => [{ event, cursor }, ...current].slice(0, KEEP)),
        onStatus: setStatus,
        onReset: (reason) => {
          setRows([]);
          setNotice(`The stream restarted from now: ${reason}`);
        },
      },
    );
    connection.current = live;
    live.start();
    return () => live.stop();
  }, [filterKey]);

  const paused = status.state === "paused";
  return (
    <main id="main">
      <h1>Live</h1>
      <form
        class="filters"
        aria-label="Live filters"
        onSubmit={(event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          navigate(
            hrefOf("/live", {
              source: String(data.get("source") ?? "").trim(),
              type: String(data.get("type") ?? "").trim(),
              subject: String(data.get("subject") ?? "").trim(),
              filter: String(data.get("filter") ?? "").trim(),
            }),
            true,
          );
        }}
      >
        <label>
          Source <input name="source" defaultValue={filters.source} placeholder="source id" />
        </label>
        <label>
          Type <input name="type" defaultValue={filters.type} placeholder="agreement.*" />
        </label>
        <label>
          Subject <input name="subject" defaultValue={filters.subject} placeholder="agreements/*" />
        </label>
        <label class="filter-box">
          Filter{" "}
          <input
            name="filter"
            value={filterText}
            onInput={(event) => setFilterText(event.currentTarget.value)}
            placeholder='{"data":{"status":"completed"}}'
            spellcheck={false}
          />
        </label>
        <button type="submit">Apply filters</button>
        <button
          type="button"
          aria-pressed={paused}
          disabled={status.state === "refused"}
          onClick={() => (paused ? connection.current?.resume() : connection.current?.pause())}
        >
          {paused ? "Resume" : "Pause"}
        </button>
      </form>
      <FilterTestPanel text={filterText} />
      <p class={`status status-${status.state}`} role="status" data-state={status.state}>
        {statusText(status)}
      </p>
      {notice && <p class="notice">{notice}</p>}
      <div class="table-wrap">
        <table class="events" aria-label="Live events, newest first">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Type</th>
              <th scope="col">Source</th>
              <th scope="col">Subject</th>
              <th scope="col">Event</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ event, cursor }) => (
              <tr key={cursor} data-id={event.id} data-cursor={cursor}>
                <td class="ev-time">{formatTime(event.receivedtime ?? event.time)}</td>
                <td class="ev-type">{event.type}</td>
                <td class="ev-source">{event.source}</td>
                <td class="ev-subject">{event.subject ?? "—"}</td>
                <td class="ev-id">
                  <Link href={hrefOf(`/events/${event.id}`)}>{event.id}</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && status.state !== "refused" && (
        <NoEvents title="No events yet: they appear here as they arrive." />
      )}
    </main>
  );
}
