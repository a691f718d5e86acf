-- Read a room consistently: race json and the meta hash (rev, ver, p:SEAT progress, ...).
-- KEYS: 1 meta, 2 race
local race = redis.call('GET', KEYS[2])
if not race then return false end
return {race, redis.call('HGETALL', KEYS[1])}
