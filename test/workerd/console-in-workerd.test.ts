/**
 * The web console served by the Worker entry inside workerd: the page, with its
 * Content-Security-Policy, and its hashed assets come from the generated module, with no
 * filesystem (src/console/console-routes.ts).
 */
import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { CONSOLE_ASSETS } from "../../src/console/console-assets.generated.ts";

const BASE = "http://gateway.test";

it("serves /console and its assets from the Worker", async () => {
  const page = await exports.default.fetch(`${BASE}/console/search?type=agreement.*`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  const html = await page.text();
  for (const [name, asset] of Object.entries(CONSOLE_ASSETS)) {
    expect(html).toContain(`/console/assets/${name}`);
    const answer = await exports.default.fetch(`${BASE}/console/assets/${name}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe(asset.type);
    expect(await answer.text()).toBe(asset.body);
  }
  // Not the zero-config Node development setup: no key is offered.
  expect((await exports.default.fetch(`${BASE}/console/dev-key`)).status).toBe(404);
});
