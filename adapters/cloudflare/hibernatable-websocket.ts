/**
 * `/ws` on a Durable Object with the WebSocket Hibernation API: the runtime owns each socket
 * (`acceptWebSocket`, tagged `client:<id>`), the object is called back per message and close,
 * a bare `ping` text is answered `pong` by the runtime itself without waking the object
 * (`setWebSocketAutoResponse`), and each socket's attachment keeps what rebuilds its session
 * when the object was evicted or restarted: the connect URL, the credential and the last resume
 * cursor (updated with every event frame and heartbeat). A rebuilt session re-authorizes (an expired token ends
 * it as on connect) and resumes from that cursor through the event log (src/stream/stream-session.ts),
 * so the subscriber may see events again after the cursor, never miss one.
 */
import type { GatewayContext } from "../../src/gateway-context.ts";
import { authorizeSubscriber, type StreamGrant } from "../../src/stream/authorize-subscriber.ts";
import type { LiveStream } from "../../src/stream/live-stream.ts";
import { parseClientMessage } from "../../src/stream/parse-client-message.ts";
import { formatCursor } from "../../src/stream/stream-cursor.ts";
import { CLOSE_CODES, errorFrame, heartbeatFrame } from "../../src/stream/stream-frames.ts";
import { createStreamSession, type StreamSession } from "../../src/stream/stream-session.ts";
import type { DurableObjectState, HibernatableWebSocket } from "./cloudflare-types.ts";

declare const WebSocketPair: new () => { 0: WebSocket; 1: HibernatableWebSocket };
declare const WebSocketRequestResponsePair: new (request: string, response: string) => unknown;

/** What a socket's attachment holds (at most 2 KiB by the runtime's rules). */
interface Attachment {
  url: string;
  authorization: string | null;
  /** The last resume cursor sent (ready, event or heartbeat frame). */
  cursor?: number;
}

/** The hibernatable `/ws` of one object. */
export function createHibernatableWebSockets(
  state: DurableObjectState,
  open: () => { ctx: GatewayContext; live: LiveStream },
) {
  const sessions = new Map<HibernatableWebSocket, StreamSession>();
  state.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));

  const refuse = (
    ws: HibernatableWebSocket,
    code: Parameters<typeof errorFrame>[0],
    message: string,
    details?: unknown,
  ) => {
    ws.send(errorFrame(code, message, true, details));
    ws.close(CLOSE_CODES[code], code);
  };

  const attach = (ws: HibernatableWebSocket, grant: StreamGrant, attachment: Attachment) => {
    const { live, ctx } = open();
    let current = attachment;
    const remember = (cursor: number) => {
      current = { ...current, cursor };
      ws.serializeAttachment(current);
    };
    const session = createStreamSession(live, grant, {
      send: (frame, cursor) => {
        ws.send(frame);
        // Kept in the attachment (runtime memory, not storage) for a rebuild after a wake.
        if (cursor !== undefined) remember(cursor);
        else if (frame.startsWith('{"type":"ready"'))
          remember(Number((JSON.parse(frame) as { cursor: string }).cursor));
      },
      heartbeat: (cursor, now) => {
        ws.send(heartbeatFrame(cursor, now));
        remember(cursor);
      },
      // workerd buffers outgoing frames itself and does not report the amount.
      bufferedAmount: () => 0,
      waitForDrain: async () => true,
      end: (code) => ws.close(CLOSE_CODES[code], code),
    });
    sessions.set(ws, session);
    session.start().catch((error: unknown) => ctx.logger.error("live session failed", { error: String(error) }));
    return session;
  };

  /** Authorizes the subscriber an attachment describes (on connect, and after a wake). */
  const authorize = (attachment: Attachment) => {
    const { ctx, live } = open();
    const url = new URL(attachment.url);
    if (attachment.cursor !== undefined) url.searchParams.set("since", formatCursor(attachment.cursor));
    const headers = new Headers(attachment.authorization ? { authorization: attachment.authorization } : {});
    return authorizeSubscriber(ctx, live.destinationIds, new Request(url, { headers }), url);
  };

  const sessionOf = async (ws: HibernatableWebSocket) => {
    const known = sessions.get(ws);
    if (known) return known;
    const attachment = ws.deserializeAttachment() as Attachment;
    const result = await authorize(attachment);
    if (result.ok) return attach(ws, result.grant, attachment);
    refuse(ws, result.refusal.code, result.refusal.message, result.refusal.details);
    return undefined;
  };

  return {
    /** Answers an upgrade request: the 101 with the client end; the server end stays here. */
    async upgrade(request: Request): Promise<Response> {
      const attachment: Attachment = { url: request.url, authorization: request.headers.get("authorization") };
      const result = await authorize(attachment);
      const pair = new WebSocketPair();
      const ws = pair[1];
      // Tagged by client, so one client's sockets can be found without a scan.
      state.acceptWebSocket(ws, [`client:${result.ok ? result.grant.clientId : "refused"}`]);
      ws.serializeAttachment(attachment);
      // A refused subscriber still gets the socket, one error frame and the close code (a browser
      // cannot read the status of a failed handshake), as on Node.
      if (result.ok) attach(ws, result.grant, attachment);
      else refuse(ws, result.refusal.code, result.refusal.message, result.refusal.details);
      return new Response(null, { status: 101, webSocket: pair[0] } as ResponseInit);
    },
    /** Rebuilds the sessions of sockets that outlived the object's memory. */
    async restore(): Promise<void> {
      await Promise.all(state.getWebSockets().map((ws) => sessionOf(ws)));
    },
    async message(ws: HibernatableWebSocket, message: string | ArrayBuffer): Promise<void> {
      const session = await sessionOf(ws);
      if (!session) return;
      const text = typeof message === "string" ? message : new TextDecoder().decode(message);
      const parsed = parseClientMessage(text);
      if (!parsed.ok) {
        ws.send(parsed.errorFrame);
        return;
      }
      session.handle(parsed.message);
    },
    close(ws: HibernatableWebSocket): void {
      sessions.get(ws)?.dispose();
      sessions.delete(ws);
    },
  };
}
