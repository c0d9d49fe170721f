/**
 * A second baseline: an h3 v2 app on the same Node server the gateway uses, reading the body and
 * answering 202 with no verification or storage. gateway vs this = the cost of the gateway's own
 * work; this vs bare = the framework's. Prints its port on stdout.
 */
import { H3, serve } from "h3";

const app = new H3();
app.post("/webhooks/:sourceId", async (event) => {
  await event.req.text();
  event.res.status = 202;
  return { id: "empty", duplicate: false };
});
const server = serve(app, { port: 0, hostname: "127.0.0.1", silent: true, gracefulShutdown: false });
await server.ready();
console.log(`PORT ${new URL(server.url ?? "").port}`);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
