-- Accept one move atomically (see server/store.py, RedisRoomStore.submit_move).
-- KEYS: 1 meta, 2 moves of the seat, 3 seq answers of the seat, 4 event log
-- ARGV: 1 seat, 2 seq, 3 expected move count, 4 move entry, 5 now (ms), 6 round,
--       7 event body, 8 progress value, 9 answer body, 10 log cap, 11 channel, 12 ttl (ms)
-- Seven commands on the accepted path (each redis.call, and each write in the
-- append-only file, costs redis-server CPU on every move): the seat's move count, its
-- progress and the event version are fields of meta, read and written with the checks.
local s = redis.call('HMGET', KEYS[3], ARGV[2], 'last')
if s[1] then return {'dup', s[1]} end
local seat = ARGV[1]
local m = redis.call('HMGET', KEYS[1], 'status', 'round', 'start_at', 'ends_at',
  'out:' .. seat, 'n:' .. seat, 'ver')
if m[1] ~= 'countdown' and m[1] ~= 'running' then return {'closed', m[1] or 'gone'} end
if m[2] ~= ARGV[6] then return {'closed', 'round'} end
local now = tonumber(ARGV[5])
if m[3] == false or m[3] == '' or tonumber(m[3]) > now then return {'closed', 'early'} end
if m[4] and m[4] ~= '' and tonumber(m[4]) <= now then return {'closed', 'late'} end
if m[5] and m[5] ~= '' then return {'out', m[5]} end
local last = tonumber(s[2] or '0')
if tonumber(ARGV[2]) <= last then return {'stale', tostring(last)} end
local n = tonumber(m[6] or '0')
if n ~= tonumber(ARGV[3]) then return {'count', tostring(n)} end
redis.call('RPUSH', KEYS[2], ARGV[4])
local v = tonumber(m[7] or '0') + 1
local entry = v .. '|' .. ARGV[7]
-- The log keeps at least the last `cap` events: trimmed when an eighth over, not each time.
local cap = tonumber(ARGV[10])
if redis.call('RPUSH', KEYS[4], entry) > cap + math.floor(cap / 8) then
  redis.call('LTRIM', KEYS[4], -cap, -1)
end
redis.call('HSET', KEYS[3], ARGV[2], v .. '|' .. ARGV[9], 'last', ARGV[2])
redis.call('HSET', KEYS[1], 'ver', v, 'n:' .. seat, n + 1, 'p:' .. seat, ARGV[8])
if n == 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[12])
  redis.call('PEXPIRE', KEYS[3], ARGV[12])
end
redis.call('PUBLISH', ARGV[11], entry)
return {'ok', v}
