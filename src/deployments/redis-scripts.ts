/**
 * The Lua of the shared deployment state (redis.ts). Every script touches one deployment's keys
 * only, all under one hash tag `{dep:<id>}` (one slot on a Redis Cluster), on Redis's clock (TIME),
 * so nodes' clocks need not agree. Keys, in this order everywhere:
 *   1 calls  sorted set: the rpm log, a call id per admitted call scored by its admission (ms)
 *   2 win    hash: `t<slot>` tokens and `c<slot>` calls per slot of windowMs/60
 *   3 fl     sorted set: calls in flight, scored by their lease's end (renewed while the call runs)
 *   4 cool   string: present (PX) while the deployment cools down
 *   5 lat    string: the EWMA of time to first byte
 */

/** `now` (ms, Redis's clock) and the window's sums, dropping slots that left it: used, calls. */
const WINDOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function sums(win, windowMs, slotMs, drop)
  local oldest = math.floor((now - windowMs) / slotMs)
  local h = redis.call('HGETALL', win)
  local used, calls = 0, 0
  for i = 1, #h, 2 do
    local f = h[i]
    if tonumber(string.sub(f, 2)) < oldest then
      if drop then redis.call('HDEL', win, f) end
    elseif string.sub(f, 1, 1) == 't' then used = used + tonumber(h[i + 1])
    else calls = calls + tonumber(h[i + 1]) end
  end
  return used, calls
end
local function count(win, slotMs, ttl, tokens, calls)
  local slot = math.floor(now / slotMs)
  redis.call('HINCRBYFLOAT', win, 't' .. slot, tokens)
  if calls > 0 then redis.call('HINCRBY', win, 'c' .. slot, calls) end
  redis.call('PEXPIRE', win, ttl)
  return slot
end
local function freedIn(win, windowMs, slotMs, excess)
  local oldest = math.floor((now - windowMs) / slotMs)
  local h = redis.call('HGETALL', win)
  local slots, tokens = {}, {}
  for i = 1, #h, 2 do
    local f = h[i]
    local s = tonumber(string.sub(f, 2))
    if string.sub(f, 1, 1) == 't' and s >= oldest then
      slots[#slots + 1] = s
      tokens[s] = tonumber(h[i + 1])
    end
  end
  table.sort(slots)
  local freed, last = 0, oldest
  for _, s in ipairs(slots) do
    freed, last = freed + tokens[s], s
    if freed >= excess then break end
  end
  return math.max(0, math.ceil((last + 1) * slotMs + windowMs - now))
end
local function state(used, calls, logged)
  local cool = redis.call('PTTL', KEYS[4])
  if cool < 0 then cool = 0 end
  return { logged, calls, tostring(used), redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf'), cool, redis.call('GET', KEYS[5]) or '' }
end
`;

/**
 * ARGV: rpm (-1: none), tpm (-1: none), tokens, call id, windowMs, slotMs, leaseMs.
 * Answers { admitted (0/1), slot, state, why, ms }: state as USAGE's. Admits when not cooling down,
 * fewer than rpm calls are logged in the window and its tokens plus these fit tpm; then logs the
 * call (rpm), counts its tokens in the current slot, and opens its in-flight lease. A refusal says
 * why ('cooling', 'rpm', 'tpm': the one that holds longest) and the ms until the call would fit:
 * the cool-down's end, the rpm log's oldest entry leaving the window, the oldest slots holding the
 * tpm excess leaving it (read here, in the same round trip; nothing more on an admission).
 */
export const ACQUIRE = `${WINDOW_LUA}
local rpm, tpm, tokens = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local windowMs, slotMs, lease = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local used, calls = sums(KEYS[2], windowMs, slotMs, true)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local logged = redis.call('ZCARD', KEYS[1])
local ok = 1
if redis.call('PTTL', KEYS[4]) > 0 then ok = 0
elseif rpm >= 0 and logged >= rpm then ok = 0
elseif tpm >= 0 and used + tokens > tpm then ok = 0 end
local slot = -1
if ok == 1 then
  if rpm >= 0 then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], windowMs + 1000)
    logged = logged + 1
  end
  slot = count(KEYS[2], slotMs, windowMs + 2 * slotMs, tokens, 1)
  redis.call('ZADD', KEYS[3], now + lease, ARGV[4])
  redis.call('PEXPIRE', KEYS[3], lease + 1000)
  used, calls = used + tokens, calls + 1
end
local why, wait = '', 0
if ok == 0 then
  local cool = redis.call('PTTL', KEYS[4])
  if cool > 0 then why, wait = 'cooling', cool end
  if rpm >= 0 and logged >= rpm then
    local w = windowMs
    if rpm > 0 then
      local e = redis.call('ZRANGE', KEYS[1], logged - rpm, logged - rpm, 'WITHSCORES')
      w = math.ceil(tonumber(e[2]) + windowMs - now)
    end
    if why == '' or w > wait then why, wait = 'rpm', w end
  end
  if tpm >= 0 and used + tokens > tpm then
    local w = freedIn(KEYS[2], windowMs, slotMs, used + tokens - tpm)
    if why == '' or w > wait then why, wait = 'tpm', w end
  end
end
return { ok, slot, state(used, calls, logged), why, wait }
`;

/**
 * ARGV: call id, slot of its admission, token correction (used - estimated), ttfb ms ('' unknown),
 * windowMs, slotMs, alpha. Closes the call's lease; fewer tokens come off its slot while that slot is
 * still kept, more are counted in the current slot (never under); the EWMA moves by the ttfb.
 */
export const RELEASE = `${WINDOW_LUA}
redis.call('ZREM', KEYS[3], ARGV[1])
local delta = tonumber(ARGV[3])
if delta < 0 then
  local f = 't' .. ARGV[2]
  local v = redis.call('HGET', KEYS[2], f)
  if v then redis.call('HSET', KEYS[2], f, tostring(math.max(0, tonumber(v) + delta))) end
elseif delta > 0 then
  count(KEYS[2], tonumber(ARGV[6]), tonumber(ARGV[5]) + 2 * tonumber(ARGV[6]), delta, 0)
end
if ARGV[4] ~= '' then
  local s = tonumber(ARGV[4])
  local old = tonumber(redis.call('GET', KEYS[5]) or '')
  if old then s = old + tonumber(ARGV[7]) * (s - old) end
  redis.call('SET', KEYS[5], tostring(s), 'PX', 86400000)
end
return 1
`;

/** ARGV: ms. The deployment cools down for ms from now, unless it already does for longer. */
export const COOL = `
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[4]) < ms then redis.call('SET', KEYS[4], '1', 'PX', ms) end
return 1
`;

/** ARGV: leaseMs, call ids. This node's calls still run: their leases end leaseMs from now. */
export const RENEW = `${WINDOW_LUA}
for i = 2, #ARGV do redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[1]) + 1000)
return 1
`;

/** ARGV: windowMs, slotMs. Answers the state: { rpm-logged calls, slot calls, tokens, in flight, cool-down ms left, EWMA or '' }. */
export const USAGE = `${WINDOW_LUA}
local windowMs = tonumber(ARGV[1])
local used, calls = sums(KEYS[2], windowMs, tonumber(ARGV[2]), false)
return state(used, calls, redis.call('ZCOUNT', KEYS[1], '(' .. (now - windowMs), '+inf'))
`;

/**
 * ARGV: calls, tokens, windowMs, slotMs, a prefix for the calls' ids. What a node admitted on its
 * own while Redis was down, counted here as admitted now (later than they were: never under).
 */
export const PAY = `${WINDOW_LUA}
local n, windowMs, slotMs = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 1, n do redis.call('ZADD', KEYS[1], now, ARGV[5] .. i) end
if n > 0 then redis.call('PEXPIRE', KEYS[1], windowMs + 1000) end
count(KEYS[2], slotMs, windowMs + 2 * slotMs, tonumber(ARGV[2]), n)
return 1
`;

/** ACQUIRE's answer: admitted (0/1), slot, state, why refused ('' when admitted), ms until it would fit. */
export type AcquireReply = [number, number, StateReply, string, number];

/** The state as ACQUIRE and USAGE answer it. */
export type StateReply = [number, number, string, number, number, string];
