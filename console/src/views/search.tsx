/**
 * Search: every filter of `GET /events` (source, type, subject, external_id, from, to, limit, and
 * a content filter as JSON, docs/filters.md, with a panel to test it), cursor pagination, and deep links: the URL holds the filters, the page cursor and the selected
 * event, so a copied URL opens the same results with the same event shown.
 */
import { useEffect, useState } from "preact/hooks";
import { callApi, describeError, queryString } from "../api.ts";
import { NoEvents } from "../components/empty-state.tsx";
import { FilterTestPanel } from "../components/filter-test-panel.tsx";
import { formatTime, isoToLocalInput, localInputToIso } from "../components/format.ts";
import { Link } from "../components/link.tsx";
import { hrefOf, navigate, type Route } from "../router.ts";
import type { EventPage } from "../types.ts";
import { EventDetail } from "./event-detail.tsx";

const FILTERS = ["source", "type", "subject", "external_id", "from", "to", "filter", "limit"] as const;
type Filters = Record<(typeof FILTERS)[number] | "cursor" | "event", string | undefined>;

function filtersOf(query: URLSearchParams): Filters {
  const out = {} as Filters;
  for (const name of [...FILTERS, "cursor", "event"] as const) out[name] = query.get(name) ?? undefined;
  return out;
}

export function SearchView(props: { route: Route }) {
  const filters = filtersOf(props.route.query);
  const { event: selected, ...listFilters } = filters;
  const listKey = queryString(listFilters);
  // Results are kept with the filters they answer: a late answer to earlier filters is dropped,
  // and the previous filters' rows are never shown under the new URL.
  const [result, setResult] = useState<{ key: string; page?: EventPage; error?: string }>();
  const [limit, setLimit] = useState(filters.limit ?? "50");
  const [filterText, setFilterText] = useState(filters.filter ?? "");
  const page = result?.key === listKey ? result.page : undefined;
  const error = result?.key === listKey ? result.error : undefined;

  useEffect(() => {
    let current = true;
    setLimit(filters.limit ?? "50");
    setFilterText(filters.filter ?? "");
    callApi<EventPage>(`/events${listKey}`).then(
      (answer) => current && setResult({ key: listKey, page: answer }),
      (failure) => current && setResult({ key: listKey, error: describeError(failure) }),
    );
    return () => {
      current = false;
    };
  }, [listKey]);

  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(data.get(name) ?? "").trim() || undefined;
    navigate(
      hrefOf("/search", {
        source: text("source"),
        type: text("type"),
        subject: text("subject"),
        external_id: text("external_id"),
        from: localInputToIso(text("from") ?? ""),
        to: localInputToIso(text("to") ?? ""),
        filter: text("filter"),
        limit: text("limit") === "50" ? undefined : text("limit"),
      }),
    );
  };

  return (
    <main id="main">
      <h1>Search</h1>
      <form class="filters" aria-label="Event log filters" onSubmit={submit} key={listKey}>
        <label>
          Source <input name="source" defaultValue={filters.source} placeholder="source id" />
        </label>
        <label>
          Type <input name="type" defaultValue={filters.type} placeholder="agreement.*" />
        </label>
        <label>
          Subject <input name="subject" defaultValue={filters.subject} placeholder="agreements/…" />
        </label>
        <label>
          External id <input name="external_id" defaultValue={filters.external_id} />
        </label>
        <label>
          From <input name="from" type="datetime-local" defaultValue={isoToLocalInput(filters.from)} />
        </label>
        <label>
          To <input name="to" type="datetime-local" defaultValue={isoToLocalInput(filters.to)} />
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
        <label>
          Per page{" "}
          <select name="limit" value={limit} onChange={(event) => setLimit(event.currentTarget.value)}>
            {["10", "50", "100", "500"].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      <FilterTestPanel text={filterText} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!page && !error && <p role="status">Searching…</p>}
      {page && (
        <>
          <p role="status">
            {page.events.length} event{page.events.length === 1 ? "" : "s"} on this page
            {filters.cursor ? " (not the first page)" : ""}
          </p>
          <div class="table-wrap">
            <table class="events" aria-label="Search results, newest first">
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
                {page.events.map(({ event, marks }) => (
                  <tr key={event.id} data-id={event.id} class={event.id === selected ? "selected-row" : undefined}>
                    <td class="ev-time">{formatTime(event.receivedtime ?? event.time)}</td>
                    <td class="ev-type">
                      {event.type}
                      {marks.length > 0 && <span class="hint"> ({marks.join(", ")})</span>}
                    </td>
                    <td class="ev-source">{event.source}</td>
                    <td class="ev-subject">{event.subject ?? "—"}</td>
                    <td class="ev-id">
                      <Link href={hrefOf("/search", { ...listFilters, event: event.id })}>{event.id}</Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.events.length === 0 &&
            (FILTERS.some((name) => name !== "limit" && filters[name]) || filters.cursor ? (
              <p class="empty-state" data-empty="search">
                No events match these filters. <Link href={hrefOf("/search")}>Clear the filters</Link>
              </p>
            ) : (
              <NoEvents title="No events yet: the event log is empty." />
            ))}
          <nav class="pager" aria-label="Pages">
            {filters.cursor && <Link href={hrefOf("/search", { ...listFilters, cursor: undefined })}>First page</Link>}
            {page.next_cursor && (
              <Link href={hrefOf("/search", { ...listFilters, cursor: page.next_cursor })}>Next page</Link>
            )}
          </nav>
        </>
      )}
      {selected && (
        <section class="selected" aria-label="Selected event">
          <EventDetail id={selected} />
        </section>
      )}
    </main>
  );
}
