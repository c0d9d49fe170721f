/**
 * The optional routes this gateway offers the console, from the page's
 * `<meta name="gateway-features">` (src/console/console-routes.ts). The console asks only for
 * routes that exist here: a 404 would be an error in the browser's console.
 */
export type Feature = "test-events" | "stream-tokens" | "dev-key";

/** Whether the gateway that served this page offers `feature`. */
export function hasFeature(feature: Feature): boolean {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="gateway-features"]');
  return (meta?.content ?? "").split(" ").includes(feature);
}
