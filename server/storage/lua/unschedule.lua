-- Drop a room's deadline only if nobody moved it meanwhile.
-- KEYS: 1 deadlines zset. ARGV: 1 room, 2 the score that was handled
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) <= tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
