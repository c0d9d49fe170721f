/**
 * The web console's entry (docs/console.md): sign-in, then a shell with navigation and one
 * view per route. Everything it shows comes from the gateway's public API with the session's key.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { callApi } from "./api.ts";
import { ConditionsBanner } from "./components/conditions-banner.tsx";
import { Link } from "./components/link.tsx";
import { hasFeature } from "./features.ts";
import { hrefOf, type Route, useRoute, type ViewName } from "./router.ts";
import { clearKey, readKey } from "./session.ts";
import { DestinationsView } from "./views/destinations.tsx";
import { EventView } from "./views/event-view.tsx";
import { LiveView } from "./views/live.tsx";
import { OverviewView } from "./views/overview.tsx";
import { SearchView } from "./views/search.tsx";
import { SendTestEventView } from "./views/send-test-event.tsx";
import { SignIn } from "./views/sign-in.tsx";

const TITLES: Record<ViewName, string> = {
  overview: "Overview",
  live: "Live",
  search: "Search",
  event: "Event",
  destinations: "Destinations",
  send: "Send a test event",
};

function View(props: { route: Route }) {
  const { route } = props;
  switch (route.view) {
    case "live":
      return <LiveView route={route} />;
    case "search":
      return <SearchView route={route} />;
    case "event":
      return <EventView id={route.id ?? ""} />;
    case "destinations":
      return <DestinationsView />;
    case "send":
      return <SendTestEventView />;
    default:
      return <OverviewView />;
  }
}

function Shell(props: { onSignOut(): void }) {
  const route = useRoute();
  const [testEvents, setTestEvents] = useState(false);
  useEffect(() => {
    if (!hasFeature("test-events")) return;
    callApi("/test-events").then(
      () => setTestEvents(true),
      () => setTestEvents(false),
    );
  }, []);
  useEffect(() => {
    document.title = `${TITLES[route.view]} · Gateway console`;
  }, [route.view]);
  const items: [ViewName, string, string][] = [
    ["overview", "Overview", ""],
    ["live", "Live", "/live"],
    ["search", "Search", "/search"],
    ["destinations", "Destinations", "/destinations"],
    ...(testEvents ? [["send", "Send test event", "/send"] as [ViewName, string, string]] : []),
  ];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Gateway console</span>
        <nav aria-label="Views">
          <ul>
            {items.map(([view, label, path]) => (
              <li key={view}>
                <Link href={hrefOf(path)} current={route.view === view}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <ConditionsBanner />
      <View route={route} />
    </>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(() => readKey() !== null);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  return (
    <Shell
      onSignOut={() => {
        clearKey();
        setSignedIn(false);
      }}
    />
  );
}

render(<App />, document.getElementById("app") as HTMLElement);
