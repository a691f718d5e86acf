-- Accept one move atomically (see server/store.py, RedisRoomStore.submit_move).
-- KEYS: 1 meta, 2 moves of the seat, 3 seq answers of the seat, 4 event log
-- ARGV (1-4 the same in every call for the seat): 1 seat, 2 log cap, 3 channel,
--       4 ttl (ms), 5 seq, 6 expected move count, 7 move, 8 now (ms), 9 round,
--       10 event body, 11 progress value
-- Seven commands on the accepted path (each redis.call, and each write in the
-- append-only file, costs redis-server CPU on every move): the seat's move count, its
-- progress and the event version are fields of meta, read and written with the checks.
-- The answer kept for a re-sent seq is "VERSION|event body": the event holds all of it.
local s = redis.call('HMGET', KEYS[3], ARGV[5], 'last')
if s[1] then return {'dup', s[1]} end
local seat = ARGV[1]
local m = redis.call('HMGET', KEYS[1], 'status', 'round', 'start_at', 'ends_at',
  'out:' .. seat, 'n:' .. seat, 'ver')
if m[1] ~= 'countdown' and m[1] ~= 'running' then return {'closed', m[1] or 'gone'} end
if m[2] ~= ARGV[9] then return {'closed', 'round'} end
local now = tonumber(ARGV[8])
if m[3] == false or m[3] == '' or tonumber(m[3]) > now then return {'closed', 'early'} end
if m[4] and m[4] ~= '' and tonumber(m[4]) <= now then return {'closed', 'late'} end
if m[5] and m[5] ~= '' then return {'out', m[5]} end
local last = tonumber(s[2] or '0')
if tonumber(ARGV[5]) <= last then return {'stale', tostring(last)} end
local n = tonumber(m[6] or '0')
if n ~= tonumber(ARGV[6]) then return {'count', tostring(n)} end
redis.call('RPUSH', KEYS[2], ARGV[8] .. ' ' .. ARGV[7])
local v = tonumber(m[7] or '0') + 1
local entry = v .. '|' .. ARGV[10]
-- The log keeps at least the last `cap` events: trimmed when an eighth over, not each time.
local cap = tonumber(ARGV[2])
if redis.call('RPUSH', KEYS[4], entry) > cap + math.floor(cap / 8) then
  redis.call('LTRIM', KEYS[4], -cap, -1)
end
redis.call('HSET', KEYS[3], ARGV[5], entry, 'last', ARGV[5])
redis.call('HSET', KEYS[1], 'ver', v, 'n:' .. seat, n + 1, 'p:' .. seat, ARGV[11])
if n == 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('PUBLISH', ARGV[3], entry)
return {'ok', v}
