/**
 * A fake of the e-sign API, written from seeds/esign-api-v1.md: OAuth client credentials at
 * `POST /oauth/access-token` issuing real HS256-signed JWTs with real expiry on an injectable
 * clock, token revocation, scopes, the documented rate limits (token endpoint 10/min per IP and
 * 30/min per client_id; 60/min per client elsewhere; 429 `rate_limited` with `Retry-After`),
 * and the agreement endpoints of esign-agreements.ts (binary PDF upload and download included).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import { createAgreementEndpoints } from "./esign-agreements.ts";
import { createRateLimit, type FakeServer, readBody, sendError, sendJson, startFakeServer } from "./fake-http.ts";

export interface EsignFakeClient {
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

export interface EsignFakeOptions {
  /** Epoch ms; default `Date.now`. Token expiry and rate windows follow it. */
  now?: () => number;
  clients?: EsignFakeClient[];
  /** Default 3600 (the documented lifetime). */
  tokenLifetimeSeconds?: number;
  /** Documented limits per minute; tests under load raise them. */
  tokenLimitPerIp?: number;
  tokenLimitPerClient?: number;
  generalLimitPerClient?: number;
}

export interface EsignFake extends FakeServer {
  client: EsignFakeClient;
  /** POSTs to the token endpoint, answered or faulted. */
  tokenRequests(): number;
  /** Every access token issued so far. */
  issued: string[];
  /** Makes every token issued so far invalid (as if revoked). */
  revokeAll(): void;
  /** SHA-256 (hex) of each agreement's uploaded main document. */
  documentHashes: Map<string, string>;
  /** Creates an agreement directly (test setup); returns its id. */
  createAgreement(title?: string): string;
  /** Headers of each PDF upload, as received. */
  uploadHeaders: IncomingMessage["headers"][];
  /** Makes PDF uploads wait (unread) until the returned function is called. */
  holdUploads(): () => void;
  /** Bytes of PDF downloads the fake's sockets have accepted so far. */
  downloadSent(): number;
}

const ALL_SCOPES = ["agreements:read", "agreements:create", "agreements:send", "agreements:cancel"];

/** Starts the fake on a random loopback port. */
export async function startEsignFake(options: EsignFakeOptions = {}): Promise<EsignFake> {
  const now = options.now ?? Date.now;
  const clients = options.clients ?? [
    {
      clientId: `cid_${randomBytes(6).toString("hex")}`,
      clientSecret: randomBytes(24).toString("hex"),
      scopes: ALL_SCOPES,
    },
  ];
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const signingKey = randomBytes(32);
  const tokenPerIp = createRateLimit(options.tokenLimitPerIp ?? 10, 60_000, now);
  const tokenPerClient = createRateLimit(options.tokenLimitPerClient ?? 30, 60_000, now);
  const general = createRateLimit(options.generalLimitPerClient ?? 60, 60_000, now);
  const issued: string[] = [];
  const revoked = new Set<string>();
  const verified = new Map<string, JWTPayload>();
  const agreements = createAgreementEndpoints(now);

  const issueToken = async (req: IncomingMessage, res: ServerResponse) => {
    const ip = req.socket.remoteAddress ?? "?";
    const ipLimit = tokenPerIp.hit(ip);
    if (!ipLimit.allowed) {
      req.resume();
      return sendError(res, 429, "rate_limited", "too many token requests", {
        "retry-after": String(ipLimit.retryAfterSeconds),
      });
    }
    let body: { client_id?: unknown; client_secret?: unknown };
    try {
      body = JSON.parse((await readBody(req)).toString("utf8"));
    } catch {
      return sendError(res, 400, "invalid_request", "JSON body required");
    }
    if (typeof body.client_id !== "string" || typeof body.client_secret !== "string") {
      return sendError(res, 400, "invalid_request", "client_id and client_secret are required");
    }
    const clientLimit = tokenPerClient.hit(body.client_id);
    if (!clientLimit.allowed) {
      return sendError(res, 429, "rate_limited", "too many token requests", {
        "retry-after": String(clientLimit.retryAfterSeconds),
      });
    }
    const client = clients.find((c) => c.clientId === body.client_id && c.clientSecret === body.client_secret);
    if (!client) return sendError(res, 401, "unauthorized", "invalid client credentials");
    const iat = Math.floor(now() / 1000);
    const token = await new SignJWT({ scope: client.scopes.join(" ") })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(client.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetime)
      .setJti(randomUUID())
      .sign(signingKey);
    issued.push(token);
    sendJson(res, 200, {
      access_token: token,
      token_type: "Bearer",
      expires_in: lifetime,
      expires_at: new Date((iat + lifetime) * 1000).toISOString(),
      scope: client.scopes.join(" "),
    });
  };

  /** The verified claims of the bearer token, or undefined after answering 401. */
  const authenticate = async (req: IncomingMessage, res: ServerResponse): Promise<JWTPayload | undefined> => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    let payload = token ? verified.get(token) : undefined;
    if (token && !payload) {
      try {
        payload = (await jwtVerify(token, signingKey, { algorithms: ["HS256"], currentDate: new Date(now()) })).payload;
        verified.set(token, payload);
      } catch {
        payload = undefined;
      }
    }
    if (!token || !payload || revoked.has(token) || (payload.exp ?? 0) * 1000 <= now()) {
      req.resume();
      sendError(res, 401, "unauthorized", "missing or invalid token");
      return undefined;
    }
    return payload;
  };

  const routes = async (req: IncomingMessage, res: ServerResponse, path: string, url: URL) => {
    const method = req.method ?? "GET";
    if (path === "/oauth/access-token" && method === "POST") return issueToken(req, res);
    const claims = await authenticate(req, res);
    if (!claims) return;
    if (path === "/oauth/access-token" && method === "DELETE") {
      revoked.add(/^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "");
      res.writeHead(204).end();
      return;
    }
    const limit = general.hit(String(claims.sub));
    if (!limit.allowed) {
      req.resume();
      return sendError(res, 429, "rate_limited", "too many requests", {
        "retry-after": String(limit.retryAfterSeconds),
      });
    }
    const scopes = String(claims.scope ?? "").split(" ");
    const need = (scope: string) => {
      if (scopes.includes(scope)) return true;
      req.resume();
      sendError(res, 403, "forbidden", `scope ${scope} required`);
      return false;
    };
    return agreements.routes(req, res, method, path, url, need);
  };

  const server = await startFakeServer(routes);
  return {
    ...server,
    client: clients[0] as EsignFakeClient,
    tokenRequests: () => server.count("POST", "/oauth/access-token"),
    issued,
    revokeAll: () => {
      for (const token of issued) revoked.add(token);
    },
    documentHashes: agreements.documentHashes,
    createAgreement: agreements.createAgreement,
    uploadHeaders: agreements.uploadHeaders,
    holdUploads: agreements.holdUploads,
    downloadSent: agreements.downloadSent,
  };
}
