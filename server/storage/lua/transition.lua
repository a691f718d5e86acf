-- Write a race transition if nobody else wrote one first (compare-and-set on rev).
-- KEYS: 1 meta, 2 race, 3 event log, 4 the room's ended races (for the archive),
--       5.. the seats' keys (moves, seq answers)
-- ARGV: 1 expected "REV:VER" (race writes, and events of any kind: a move accepted since the
--       race was read changed its seat, so the transition is made again on the race now),
--       2 race json, 3 status, 4 round, 5 start_at (ms or ''),
--       6 ends_at (ms or ''), 7 log cap, 8 channel, 9 ttl (ms), 10 '1': new round,
--       11 k, 12 the lobby channel, 13 the room's lobby entry (msgpack), 14 '1': this write
--       ends the race, then k (field, value) pairs for meta, then event bodies
local now = redis.call('HMGET', KEYS[1], 'rev', 'ver')
local rev = tonumber(now[1] or '0')
if (now[1] or '0') .. ':' .. (now[2] or '0') ~= ARGV[1] then return {'conflict', rev} end
rev = rev + 1
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'rev', rev, 'status', ARGV[3], 'round', ARGV[4],
  'start_at', ARGV[5], 'ends_at', ARGV[6])
if rev == 1 then
  -- A value over 64 bytes (hash-max-listpack-value) makes meta a hash table for good. A
  -- room of 8 seats keeps some 45 fields in it; as a listpack each field the move
  -- function reads or writes was searched for from the start: 18% of its instructions.
  redis.call('HSET', KEYS[1], 'table', string.rep('-', 65))
end
local k = tonumber(ARGV[11])
for i = 0, k - 1 do
  redis.call('HSET', KEYS[1], ARGV[15 + 2 * i], ARGV[16 + 2 * i])
end
if ARGV[10] == '1' then  -- a new round: boards restart; seq answers stay (a re-send is a re-send)
  for i = 5, #KEYS do
    local seat = string.match(KEYS[i], ':moves:(%d+)$')
    if seat then
      redis.call('DEL', KEYS[i])
      redis.call('HDEL', KEYS[1], 'n:' .. seat, 'p:' .. seat)
    end
  end
end
if ARGV[14] == '1' then
  -- The race ends: it is kept whole for the archive in the same step (the outbox), the
  -- finished race and every seat's moves, until a process has archived it. No expiry.
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[2])
  for i = 5, #KEYS do
    local seat = string.match(KEYS[i], ':moves:(%d+)$')
    if seat then
      local moves = redis.call('LRANGE', KEYS[i], 0, -1)
      redis.call('HSET', KEYS[4], ARGV[4] .. ':' .. seat, table.concat(moves, '\n'))
    end
  end
end
local first = nil
for i = 15 + 2 * k, #ARGV do
  local v = redis.call('HINCRBY', KEYS[1], 'ver', 1)
  first = first or v
  local entry = v .. '|' .. ARGV[i]
  redis.call('RPUSH', KEYS[3], entry)
  redis.call('PUBLISH', ARGV[8], entry)
end
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[7]), -1)
-- The lobby hears of every write, stamped with its rev (a later one wins), in the same
-- script as the write: no lobby can miss a change that was made.
redis.call('PUBLISH', ARGV[12], rev .. '|' .. ARGV[13])
for i = 1, #KEYS do
  if i ~= 4 then
    redis.call('PEXPIRE', KEYS[i], ARGV[9])
  end
end
return {'ok', rev, first or 0, redis.call('HGET', KEYS[1], 'ver') or '0'}
