/**
 * Structural types of the Workers runtime objects the Cloudflare adapter touches: Durable Object
 * state and SQLite storage, namespaces and stubs, Queues producers, WebSockets with hibernation.
 * Declared here (not taken from @cloudflare/workers-types) so that the adapter typechecks with
 * the DOM lib the core uses; see cloudflare-runtime.d.ts.
 */

/** One result of `sql.exec`: rows as objects, plus the write count. */
export interface SqlCursor<Row = Record<string, unknown>> extends Iterable<Row> {
  toArray(): Row[];
  one(): Row;
  readonly rowsWritten: number;
}

export interface SqlStorage {
  exec<Row = Record<string, unknown>>(query: string, ...bindings: unknown[]): SqlCursor<Row>;
}

export interface DurableObjectStorage {
  readonly sql: SqlStorage;
  transactionSync<T>(fn: () => T): T;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A hibernatable WebSocket as the runtime hands it to the object. */
export interface HibernatableWebSocket extends WebSocket {
  serializeAttachment(value: unknown): void;
  deserializeAttachment(): unknown;
}

export interface DurableObjectState {
  readonly storage: DurableObjectStorage;
  readonly id: { toString(): string; readonly name?: string };
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
  waitUntil(promise: Promise<unknown>): void;
  acceptWebSocket(socket: WebSocket, tags?: string[]): void;
  getWebSockets(tag?: string): HibernatableWebSocket[];
  setWebSocketAutoResponse(pair?: unknown): void;
  /** When the runtime last answered this socket by auto-response (null: never). */
  getWebSocketAutoResponseTimestamp(socket: WebSocket): Date | null;
}

export interface DurableObjectId {
  toString(): string;
}

/** A namespace binding; `T` is the RPC surface of the object class. */
export interface DurableObjectNamespace<T> {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): DurableObjectStub<T>;
}

/** A stub: the object's public methods, each returning a promise, plus `fetch`. */
export type DurableObjectStub<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
} & { fetch(input: Request | string, init?: RequestInit): Promise<Response> };

/** A Cloudflare Queues producer binding. */
export interface QueueProducer<Body = unknown> {
  send(body: Body, options?: { contentType?: "json" | "text" | "bytes" | "v8"; delaySeconds?: number }): Promise<void>;
}
