/**
 * The Lua scripts of the Redis-backed outbox (shared by the ioredis and Upstash drivers).
 * A record is a hash (`j` JSON, `st` state, `n` next attempt, `l` lease end, `o` lease owner,
 * `e`/`d` encoded ids, `dk`/`ek` its index keys) indexed by: its destination (seq order), its
 * event, `active` (non-terminal, by seq), `due` (non-terminal, by max(next attempt, lease end):
 * what `claimDue` takes) and `done` (terminal, by update time: what `purge` takes), with state
 * counts kept in one hash. Fixed KEYS first: cursor, counts, active, due, done.
 */
import { defineScript } from "./script-runner.ts";

/** Inserts or replaces one record and moves it between the indexes. */
const UPSERT = `
local function upsert(rk, dk, ek, e, d, seq, st, nxt, upd, json, terminal)
  local old = redis.call('HGET', rk, 'st')
  if old then redis.call('HINCRBY', KEYS[2], d .. '|' .. old, -1) end
  redis.call('HINCRBY', KEYS[2], d .. '|' .. st, 1)
  redis.call('HSET', rk, 'j', json, 'st', st, 'n', nxt, 'e', e, 'd', d, 'dk', dk, 'ek', ek)
  redis.call('ZADD', dk, seq, e)
  redis.call('SADD', ek, d)
  if terminal == '1' then
    redis.call('ZREM', KEYS[3], rk)
    redis.call('ZREM', KEYS[4], rk)
    redis.call('ZADD', KEYS[5], upd, rk)
  else
    redis.call('ZADD', KEYS[3], seq, rk)
    redis.call('ZREM', KEYS[5], rk)
    local lease = tonumber(redis.call('HGET', rk, 'l') or '0')
    redis.call('ZADD', KEYS[4], math.max(tonumber(nxt), lease), rk)
  end
end
local function upsert_at(i, a)
  local k = 6 + i * 3
  upsert(KEYS[k], KEYS[k + 1], KEYS[k + 2], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7])
end
`;

/**
 * KEYS: fixed five, then record, destination index, event index per record.
 * ARGV: cursor, then 8 per record (e, d, seq, state, next, updated, json, terminal).
 * Inserts the missing records; returns the positions of the inserted ones.
 */
export const createDeliveriesScript = defineScript(
  "outbox_create",
  `${UPSERT}
local inserted = {}
local n = (#KEYS - 5) / 3
for i = 0, n - 1 do
  if redis.call('EXISTS', KEYS[6 + i * 3]) == 0 then
    upsert_at(i, 2 + i * 8)
    inserted[#inserted + 1] = i
  end
end
local cursor = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cursor then redis.call('SET', KEYS[1], ARGV[1]) end
return inserted
`,
);

/** As create, without the cursor (ARGV[1] unused), replacing existing records. */
export const saveDeliveriesScript = defineScript(
  "outbox_save",
  `${UPSERT}
local n = (#KEYS - 5) / 3
for i = 0, n - 1 do upsert_at(i, 2 + i * 8) end
return n
`,
);

/** KEYS: destination index. ARGV: exclusive seq bound, count, record key prefix, encoded destination id. */
export const scanDestinationScript = defineScript(
  "outbox_scan_destination",
  `local r = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '-inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for j = 1, #r, 2 do
  out[#out + 1] = tonumber(r[j + 1])
  out[#out + 1] = redis.call('HGET', ARGV[3] .. r[j] .. ':' .. ARGV[4], 'j') or ''
end
return out
`,
);

/** KEYS: event index. ARGV: record key prefix, encoded event id. Returns the JSON of each record. */
export const listByEventScript = defineScript(
  "outbox_by_event",
  `local out = {}
for _, d in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local j = redis.call('HGET', ARGV[1] .. ARGV[2] .. ':' .. d, 'j')
  if j then out[#out + 1] = j end
end
return out
`,
);

/** KEYS: active. Returns the JSON of every non-terminal record. */
export const listActiveScript = defineScript(
  "outbox_active",
  `local out = {}
for _, rk in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local j = redis.call('HGET', rk, 'j')
  if j then out[#out + 1] = j end
end
return out
`,
);

/** KEYS: a hash. Returns HGETALL. */
export const hashAllScript = defineScript("hash_all", "return redis.call('HGETALL', KEYS[1])");

/** KEYS: a hash. ARGV: field, value. */
export const hashSetScript = defineScript("hash_set", "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])");

/** KEYS: fixed five. ARGV: cutoff, batch. Removes terminal records updated before the cutoff. */
export const purgeDeliveriesScript = defineScript(
  "outbox_purge",
  `local rks = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, rk in ipairs(rks) do
  local r = redis.call('HMGET', rk, 'st', 'e', 'd', 'dk', 'ek')
  if r[1] then
    redis.call('HINCRBY', KEYS[2], r[3] .. '|' .. r[1], -1)
    redis.call('ZREM', r[4], r[2])
    redis.call('SREM', r[5], r[3])
    if redis.call('SCARD', r[5]) == 0 then redis.call('DEL', r[5]) end
  end
  redis.call('DEL', rk)
  redis.call('ZREM', KEYS[5], rk)
  redis.call('ZREM', KEYS[4], rk)
  redis.call('ZREM', KEYS[3], rk)
end
return #rks
`,
);

/**
 * KEYS: due. ARGV: now, lease end, limit, owner. Leases the records due by now (next attempt
 * and any earlier lease both passed) to owner; returns their JSON, oldest due first.
 */
export const claimDueScript = defineScript(
  "outbox_claim_due",
  `local rks = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, rk in ipairs(rks) do
  redis.call('HSET', rk, 'l', ARGV[2], 'o', ARGV[4])
  redis.call('ZADD', KEYS[1], ARGV[2], rk)
  out[#out + 1] = redis.call('HGET', rk, 'j')
end
return out
`,
);

/**
 * KEYS: due, then record keys. ARGV: lease end, owner. Moves owner's leases to the new end;
 * returns the positions of the records not (any longer) leased to owner.
 */
export const renewLeasesScript = defineScript(
  "outbox_renew",
  `local lost = {}
for i = 2, #KEYS do
  local r = redis.call('HMGET', KEYS[i], 'o', 'st', 'n')
  if r[1] ~= ARGV[2] then
    lost[#lost + 1] = i - 2
  else
    redis.call('HSET', KEYS[i], 'l', ARGV[1])
    if r[2] ~= 'delivered' and r[2] ~= 'dead' then
      redis.call('ZADD', KEYS[1], math.max(tonumber(r[3]), tonumber(ARGV[1])), KEYS[i])
    end
  end
end
return lost
`,
);
