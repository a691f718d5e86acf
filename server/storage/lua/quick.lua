-- Quick match: pair with the first waiting ticket of another player, or wait.
-- KEYS: 1 the game's queue. ARGV: 1 this ticket
while true do
  local other = redis.call('LPOP', KEYS[1])
  if not other then break end
  if other ~= ARGV[1] then return other end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
return false
