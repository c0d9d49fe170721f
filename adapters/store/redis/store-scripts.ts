/**
 * The Lua scripts of the Redis-backed store, shared by the ioredis and Upstash drivers. Each
 * script is one atomic step on the server: a claim, an append (the dedupe mark, the record, its
 * index entries and the global sequence number together), a page of an index, a purge batch.
 *
 * Expiry is checked against the caller's clock (`now` in ARGV, so a test clock works and every
 * instance answers alike); each key also gets a Redis TTL so that expired marks and kv values
 * are dropped by Redis itself. Keys other than KEYS[] that a script touches (event hashes named
 * by an index) share the hash tag of KEYS[], so they live in the same cluster slot.
 */
import { defineScript } from "./script-runner.ts";

/** Mark values: `c|<expiresAt>` (claimed) or `d|<expiresAt>|<event id>` (recorded). */
const PARSE_MARK = `
local function parse_mark(v)
  if not v then return nil end
  local kind = string.sub(v, 1, 1)
  local rest = string.sub(v, 3)
  local bar = string.find(rest, '|', 1, true)
  if bar then return kind, tonumber(string.sub(rest, 1, bar - 1)), string.sub(rest, bar + 1) end
  return kind, tonumber(rest), nil
end
`;

/** KEYS: mark. ARGV: now, claim value, ttl ms. */
export const claimScript = defineScript(
  "claim",
  `${PARSE_MARK}
local kind, expires, id = parse_mark(redis.call('GET', KEYS[1]))
if kind and expires > tonumber(ARGV[1]) then
  if kind == 'd' then return {'duplicate', id} end
  return {'in_progress'}
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return {'claimed'}
`,
);

/** KEYS: mark. Drops a claim, never a recorded mark. */
export const releaseScript = defineScript(
  "release",
  `local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 2) == 'c|' then redis.call('DEL', KEYS[1]) end
return 1
`,
);

/**
 * KEYS: seq, event, mark, log, time, types, index keys... ARGV: id, record JSON, receivedAt,
 * mark value, dedupe ttl ms, type, index keys joined by newlines. Returns {inserted, seq}.
 */
export const appendScript = defineScript(
  "append",
  `redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
local existing = redis.call('HGET', KEYS[2], 's')
if existing then return {0, tonumber(existing)} end
local seq = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 's', seq, 'j', ARGV[2], 'x', ARGV[7], 't', ARGV[6])
redis.call('ZADD', KEYS[4], seq, ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
redis.call('SADD', KEYS[6], ARGV[6])
for i = 7, #KEYS do redis.call('ZADD', KEYS[i], seq, ARGV[1]) end
return {1, seq}
`,
);

/** KEYS: event. Returns {seq, json} or nil. */
export const getScript = defineScript(
  "get",
  `local r = redis.call('HMGET', KEYS[1], 's', 'j')
if not r[1] then return nil end
return {tonumber(r[1]), r[2]}
`,
);

/**
 * One page of the union of index sorted sets. KEYS: the sets. ARGV: 'desc' or 'asc', the
 * exclusive seq bound ('+inf' / '-inf' for none), count, event key prefix, and a budget of
 * record characters. Returns seq, id, JSON (nil when purged meanwhile) triples, at most count,
 * in order; once the records returned reach the budget the page ends early (after at least one)
 * and a last element, 1, says so. Redis runs one script at a time: a page of 200 records of 1 MiB
 * held every other command (every instance's appends) for seconds.
 */
export const scanScript = defineScript(
  "scan",
  `local desc = ARGV[1] == 'desc'
local bound = '(' .. ARGV[2]
local count = tonumber(ARGV[3])
local seen, items = {}, {}
for i = 1, #KEYS do
  local r
  if desc then r = redis.call('ZREVRANGEBYSCORE', KEYS[i], bound, '-inf', 'WITHSCORES', 'LIMIT', 0, count)
  else r = redis.call('ZRANGEBYSCORE', KEYS[i], bound, '+inf', 'WITHSCORES', 'LIMIT', 0, count) end
  for j = 1, #r, 2 do
    if not seen[r[j]] then
      seen[r[j]] = true
      items[#items + 1] = {tonumber(r[j + 1]), r[j]}
    end
  end
end
if desc then table.sort(items, function(a, b) return a[1] > b[1] end)
else table.sort(items, function(a, b) return a[1] < b[1] end) end
local out = {}
local budget = tonumber(ARGV[5])
local chars = 0
local n = math.min(count, #items)
for i = 1, n do
  local json = redis.call('HGET', ARGV[4] .. items[i][2], 'j') or ''
  out[#out + 1] = items[i][1]
  out[#out + 1] = items[i][2]
  out[#out + 1] = json
  chars = chars + #json
  if chars >= budget and i < n then
    out[#out + 1] = 1
    return out
  end
end
return out
`,
);

/**
 * Removes up to `batch` events received before the cutoff, with their index entries.
 * KEYS: time, log, types. ARGV: cutoff, event key prefix, batch, type index prefix.
 */
export const purgeScript = defineScript(
  "purge",
  `local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local key = ARGV[2] .. id
  local r = redis.call('HMGET', key, 'x', 't')
  if r[1] then
    for ix in string.gmatch(r[1], '[^\\n]+') do
      redis.call('ZREM', ix, id)
      if r[2] and ix == ARGV[4] .. r[2] and redis.call('ZCARD', ix) == 0 then redis.call('SREM', KEYS[3], r[2]) end
    end
  end
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return #ids
`,
);

/**
 * Removes the events named in ARGV (ids, percent-encoded as in the indexes), with their index
 * entries. KEYS: time, log, types. ARGV: event key prefix, type index prefix, ids...
 * Returns how many existed.
 */
export const removeScript = defineScript(
  "remove",
  `local removed = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local key = ARGV[1] .. id
  local r = redis.call('HMGET', key, 'x', 't')
  if r[1] then
    removed = removed + 1
    for ix in string.gmatch(r[1], '[^\\n]+') do
      redis.call('ZREM', ix, id)
      if r[2] and ix == ARGV[2] .. r[2] and redis.call('ZCARD', ix) == 0 then redis.call('SREM', KEYS[3], r[2]) end
    end
    redis.call('DEL', key)
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
  end
end
return removed
`,
);

/**
 * Replaces one event's record in place (same seq), moving its index entries to the new set.
 * KEYS: event. ARGV: id (encoded), record JSON, type (encoded), new index keys joined by newlines.
 * Returns 1 when the event existed.
 */
export const redactScript = defineScript(
  "redact",
  `local r = redis.call('HMGET', KEYS[1], 's', 'x')
if not r[1] then return 0 end
local keep = {}
for ix in string.gmatch(ARGV[4], '[^\\n]+') do keep[ix] = true end
for ix in string.gmatch(r[2] or '', '[^\\n]+') do
  if not keep[ix] then redis.call('ZREM', ix, ARGV[1]) end
end
for ix, _ in pairs(keep) do redis.call('ZADD', ix, r[1], ARGV[1]) end
redis.call('HSET', KEYS[1], 'j', ARGV[2], 'x', ARGV[4], 't', ARGV[3])
return 1
`,
);

/** KEYS: key. Returns the raw value or nil. */
export const readScript = defineScript("read", "return redis.call('GET', KEYS[1])");

/** KEYS: set. Returns its members. */
export const membersScript = defineScript("members", "return redis.call('SMEMBERS', KEYS[1])");

/** KEYS: key. ARGV: value, ttl ms. */
export const writeScript = defineScript("write", "return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])");

/** KEYS: key. */
export const deleteScript = defineScript("delete", "return redis.call('DEL', KEYS[1])");

/** KEYS: kv key. ARGV: now, value (`<expiresAt>|<value>`), ttl ms. Returns 1 when set. */
export const setIfAbsentScript = defineScript(
  "set_if_absent",
  `local v = redis.call('GET', KEYS[1])
if v then
  local bar = string.find(v, '|', 1, true)
  if tonumber(string.sub(v, 1, bar - 1)) > tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`,
);
