/**
 * The Lua scripts of the Redis-backed outbox (shared by the ioredis and Upstash drivers).
 * A record is a hash (`j` JSON, `st` state, `n` next attempt, `l` lease end, `o` lease owner,
 * `e`/`d` encoded ids, `dk`/`ek` its index keys) indexed by: its destination (seq order), its
 * event, `active` (non-terminal, by seq), `due` (non-terminal, by max(next attempt, lease end):
 * what `claimDue` takes) and `done` (terminal, by update time: what `purge` takes), with state
 * counts kept in one hash. Records of a subject that are not finished are also in a sorted set
 * per (destination, subject) by seq (its oldest is the subject's head), and `subject owners`
 * maps such a set to the instance that owns the subject (`<owner>|<until>`; per-subject
 * ordering across instances). Fixed KEYS first: cursor, counts, active, due, done, owners.
 */
import { defineScript } from "../../store/redis/script-runner.ts";

/** How many fixed keys the record-writing scripts take before the per-record keys. */
export const FIXED_KEYS = 6;

/** Inserts or replaces one record and moves it between the indexes. */
const UPSERT = `
local function upsert(rk, dk, ek, e, d, seq, st, nxt, upd, json, terminal, sk)
  local old = redis.call('HGET', rk, 'st')
  if old then redis.call('HINCRBY', KEYS[2], d .. '|' .. old, -1) end
  redis.call('HINCRBY', KEYS[2], d .. '|' .. st, 1)
  redis.call('HSET', rk, 'j', json, 'st', st, 'n', nxt, 'e', e, 'd', d, 'dk', dk, 'ek', ek)
  redis.call('ZADD', dk, seq, e)
  redis.call('SADD', ek, d)
  if sk ~= '' then redis.call('HSET', rk, 'sk', sk) end
  if terminal == '1' then
    -- A finished record holds no lease: a replay must be due at once, not when the old lease ends.
    redis.call('HDEL', rk, 'l', 'o')
    redis.call('ZREM', KEYS[3], rk)
    redis.call('ZREM', KEYS[4], rk)
    redis.call('ZADD', KEYS[5], upd, rk)
    if sk ~= '' then
      redis.call('ZREM', sk, rk)
      -- Nothing of the subject left to order: its ownership has nothing to protect.
      if redis.call('ZCARD', sk) == 0 then redis.call('HDEL', KEYS[6], sk) end
    end
  else
    redis.call('ZADD', KEYS[3], seq, rk)
    redis.call('ZREM', KEYS[5], rk)
    if sk ~= '' then redis.call('ZADD', sk, seq, rk) end
    local lease = tonumber(redis.call('HGET', rk, 'l') or '0')
    redis.call('ZADD', KEYS[4], math.max(tonumber(nxt), lease), rk)
  end
end
local function upsert_at(i, a)
  local k = FIXED + 1 + i * 3
  upsert(KEYS[k], KEYS[k + 1], KEYS[k + 2], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8])
end
`;

/**
 * KEYS: fixed six, then record, destination index, event index per record.
 * ARGV: cursor, then 9 per record (e, d, seq, state, next, updated, json, terminal, subject set
 * key or ''), then optionally a lease: its owner, its end, and per record '1' to lease it to that
 * owner as it is inserted (the routing instance's lease). Inserts the missing records; returns
 * the positions of the inserted ones.
 */
export const createDeliveriesScript = defineScript(
  "outbox_create",
  `local FIXED = ${FIXED_KEYS}
${UPSERT}
local inserted = {}
local n = (#KEYS - FIXED) / 3
local owner, lease_end = ARGV[2 + n * 9], ARGV[3 + n * 9]
for i = 0, n - 1 do
  local rk = KEYS[FIXED + 1 + i * 3]
  if redis.call('EXISTS', rk) == 0 then
    local a = 2 + i * 9
    upsert_at(i, a)
    if owner and ARGV[4 + n * 9 + i] == '1' and ARGV[a + 7] == '0' then
      redis.call('HSET', rk, 'l', lease_end, 'o', owner)
      redis.call('ZADD', KEYS[4], math.max(tonumber(ARGV[a + 4]), tonumber(lease_end)), rk)
    end
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
  `local FIXED = ${FIXED_KEYS}
${UPSERT}
local n = (#KEYS - FIXED) / 3
for i = 0, n - 1 do upsert_at(i, 2 + i * 9) end
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

/** KEYS: a hash. ARGV: field. Returns HGET. */
export const hashFieldScript = defineScript("hash_field", "return redis.call('HGET', KEYS[1], ARGV[1])");

/** KEYS: a hash. Returns HGETALL. */
export const hashAllScript = defineScript("hash_all", "return redis.call('HGETALL', KEYS[1])");

/** KEYS: a hash. ARGV: field, value. */
export const hashSetScript = defineScript("hash_set", "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])");

/** KEYS: fixed six. ARGV: cutoff, batch. Removes terminal records updated before the cutoff. */
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

/** Parses a subject owner entry into owner and end (0 when absent). */
const SUBJECT_OWNER = `
local function subject_owner(owners, sk)
  local v = redis.call('HGET', owners, sk)
  if not v then return nil, 0 end
  local bar = string.find(v, '|', 1, true)
  return string.sub(v, 1, bar - 1), tonumber(string.sub(v, bar + 1))
end
`;

/**
 * KEYS: due, subject owners. ARGV: now, lease end, limit, owner, then the encoded ids of the
 * destinations ordered by subject. Leases the records due by now (next attempt and any earlier
 * lease both passed) to owner, skipping records of a subject owned by someone else or, when
 * the subject has no live owner, not its head; returns their JSON, oldest due first.
 */
export const claimDueScript = defineScript(
  "outbox_claim_due",
  `${SUBJECT_OWNER}
local now, limit, owner = tonumber(ARGV[1]), tonumber(ARGV[3]), ARGV[4]
local ordered = {}
for i = 5, #ARGV do ordered[ARGV[i]] = true end
local out = {}
-- A pass that takes over a subject's head may have skipped later records of that subject: one
-- more pass takes them (bounded).
for pass = 1, 3 do
  local acquired = false
  -- Skipped records stay in range (and keep their order at its start); claimed ones leave it.
  local skipped = 0
  for round = 1, 50 do
    local rks = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', skipped, limit)
    if #rks == 0 then break end
    for _, rk in ipairs(rks) do
      local f = redis.call('HMGET', rk, 'd', 'sk')
      local ok = true
      if f[2] and ordered[f[1]] then
        local holder, ends = subject_owner(KEYS[2], f[2])
        if ends > now then ok = holder == owner
        else
          ok = redis.call('ZRANGE', f[2], 0, 0)[1] == rk
          if ok then acquired = true end
        end
        if ok then redis.call('HSET', KEYS[2], f[2], owner .. '|' .. ARGV[2]) end
      end
      if ok then
        redis.call('HSET', rk, 'l', ARGV[2], 'o', owner)
        redis.call('ZADD', KEYS[1], ARGV[2], rk)
        out[#out + 1] = redis.call('HGET', rk, 'j')
        if #out == limit then return out end
      else
        skipped = skipped + 1
      end
    end
    if #rks < limit then break end
  end
  if not acquired then break end
end
return out
`,
);

/**
 * KEYS: due, subject owners, then record keys. ARGV: lease end, owner. Moves owner's leases
 * (and its ownership of their subjects) to the new end; returns the positions of the records
 * not (any longer) leased to owner.
 */
export const renewLeasesScript = defineScript(
  "outbox_renew",
  `${SUBJECT_OWNER}
local lost = {}
for i = 3, #KEYS do
  local r = redis.call('HMGET', KEYS[i], 'o', 'st', 'n', 'sk')
  if r[1] ~= ARGV[2] then
    lost[#lost + 1] = i - 3
  else
    redis.call('HSET', KEYS[i], 'l', ARGV[1])
    if r[2] ~= 'delivered' and r[2] ~= 'dead' and r[2] ~= 'skipped' then
      redis.call('ZADD', KEYS[1], math.max(tonumber(r[3]), tonumber(ARGV[1])), KEYS[i])
    end
    if r[4] and subject_owner(KEYS[2], r[4]) == ARGV[2] then
      redis.call('HSET', KEYS[2], r[4], ARGV[2] .. '|' .. ARGV[1])
    end
  end
end
return lost
`,
);
