-- Accept one move atomically (see server/store.py, RedisRoomStore.submit_move).
-- KEYS: 1 meta, 2 moves of the seat, 3 seq answers of the seat, 4 event log, 5 progress
-- ARGV: 1 seat, 2 seq, 3 expected move count, 4 move entry, 5 now (ms), 6 round,
--       7 event body, 8 progress value, 9 answer body, 10 log cap, 11 channel, 12 ttl (ms)
local prev = redis.call('HGET', KEYS[3], ARGV[2])
if prev then return {'dup', prev} end
local m = redis.call('HMGET', KEYS[1], 'status', 'round', 'start_at', 'ends_at', 'out:' .. ARGV[1])
if m[1] ~= 'countdown' and m[1] ~= 'running' then return {'closed', m[1] or 'gone'} end
if m[2] ~= ARGV[6] then return {'closed', 'round'} end
local now = tonumber(ARGV[5])
if m[3] == false or m[3] == '' or tonumber(m[3]) > now then return {'closed', 'early'} end
if m[4] and m[4] ~= '' and tonumber(m[4]) <= now then return {'closed', 'late'} end
if m[5] and m[5] ~= '' then return {'out', m[5]} end
local last = tonumber(redis.call('HGET', KEYS[3], 'last') or '0')
if tonumber(ARGV[2]) <= last then return {'stale', tostring(last)} end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[3]) then return {'count', tostring(n)} end
redis.call('RPUSH', KEYS[2], ARGV[4])
local v = redis.call('HINCRBY', KEYS[1], 'ver', 1)
local entry = v .. '|' .. ARGV[7]
redis.call('RPUSH', KEYS[4], entry)
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[10]), -1)
local answer = v .. '|' .. ARGV[9]
redis.call('HSET', KEYS[3], ARGV[2], answer, 'last', ARGV[2])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[8])
if n == 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[12])
  redis.call('PEXPIRE', KEYS[3], ARGV[12])
  redis.call('PEXPIRE', KEYS[5], ARGV[12])
end
redis.call('PUBLISH', ARGV[11], entry)
return {'ok', answer}
