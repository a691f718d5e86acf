-- One budget of attempts (rooms created by a client address, sign-ins by an address or
-- for a name), shared by every server process (GCRA: one timestamp per key, the
-- "theoretical arrival time" of its next attempt).
-- KEYS: 1 the budget's key. ARGV: 1 seconds between attempts, 2 burst.
-- Returns 0 when an attempt may be made now (and counts it), else the seconds to wait (as
-- a string: Lua numbers become integers on the way out).
local interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1e6
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local next_tat = tat + interval
local allowed_at = next_tat - burst * interval
if allowed_at > now then
  return tostring(allowed_at - now)
end
redis.call('SET', KEYS[1], string.format('%.6f', next_tat), 'PX', math.ceil((next_tat - now) * 1000) + 1000)
return 0
