-- Read a room consistently: race json, rev, last event version, progress hash.
-- KEYS: 1 meta, 2 race, 3 progress
local race = redis.call('GET', KEYS[2])
if not race then return false end
local m = redis.call('HMGET', KEYS[1], 'rev', 'ver')
return {race, m[1] or '0', m[2] or '0', redis.call('HGETALL', KEYS[3])}
