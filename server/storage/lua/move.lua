-- Accept one move atomically: the final word of the checklist (server/room/checklist.py, whose
-- Verdict enum is the table V, defined in this function's library when it is loaded).
-- KEYS: 1 meta, 2 moves of the seat, 3 seq answers of the seat, 4 event log
-- ARGV (1-4 the same in every call for the seat): 1 seat, 2 log cap, 3 channel,
--       4 ttl (ms), 5 seq, 6 expected move count, 7 move, 8 now (ms), 9 round,
--       10 event body, 11 progress value, 12 the socket's token hash
-- Six commands on the accepted path (each redis.call, and each write in the
-- append-only file, costs redis-server CPU on every move): the seat's move count, its
-- progress, its highest accepted seq and the event version are fields of meta, read and
-- written with the checks; the seq answers are read only for a seq not above that one.
-- Numbers stay strings where a comparison will do (tonumber is strtod, a tenth of the
-- function's own work): times and counts are canonical decimal integers.
-- The answer kept for a re-sent seq is "VERSION|event body": the event holds all of it.

-- Seqs are 64-bit integers, canonical decimal strings: compared as strings, since a Lua
-- number is a double (2^60 and 2^60 + 1 are the same double).
local function seq_le(a, b)
  if #a ~= #b then return #a < #b end
  return a <= b
end

local seat = ARGV[1]
local m = redis.call('HMGET', KEYS[1], 'status', 'round', 'start_at', 'ends_at',
  'out:' .. seat, 'n:' .. seat, 'ver', 'tok:' .. seat, 'q:' .. seat)
if m[8] ~= ARGV[12] then return {V.SEAT, ''} end
local seq = ARGV[5]
-- The seat's highest accepted seq, kept in meta and, for processes of the version before
-- (a rolling deploy), in the seq hash too, where such a process kept it alone.
local last = m[9] or redis.call('HGET', KEYS[3], 'last') or '0'
local negative = string.sub(seq, 1, 1) == '-'
if not negative and seq_le(seq, last) then
  local answer = redis.call('HGET', KEYS[3], seq)
  if answer then return {V.DUP, answer} end
end
if m[1] ~= 'countdown' and m[1] ~= 'running' then return {V.CLOSED, m[1] or 'gone'} end
if m[2] ~= ARGV[9] then return {V.CLOSED, 'round'} end
local now = ARGV[8]
if m[3] == false or m[3] == '' or not seq_le(m[3], now) then return {V.CLOSED, 'early'} end
if m[4] and m[4] ~= '' and seq_le(m[4], now) then return {V.CLOSED, 'late'} end
if m[5] and m[5] ~= '' then return {V.OUT, m[5]} end
if negative or seq_le(seq, last) then return {V.STALE, last} end
local count = m[6] or '0'
if count ~= ARGV[6] then return {V.COUNT, count} end
local n = tonumber(count)
redis.call('RPUSH', KEYS[2], ARGV[8] .. ' ' .. ARGV[7])
local v = tonumber(m[7] or '0') + 1
local entry = v .. '|' .. ARGV[10]
-- The log keeps at least the last `cap` events: trimmed when an eighth over, not each time.
local cap = tonumber(ARGV[2])
if redis.call('RPUSH', KEYS[4], entry) > cap + math.floor(cap / 8) then
  redis.call('LTRIM', KEYS[4], -cap, -1)
end
redis.call('HSET', KEYS[3], seq, entry, 'last', seq)
redis.call('HSET', KEYS[1], 'ver', v, 'n:' .. seat, n + 1, 'p:' .. seat, ARGV[11], 'q:' .. seat, seq)
if n == 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('PUBLISH', ARGV[3], entry)
return {V.OK, v}
