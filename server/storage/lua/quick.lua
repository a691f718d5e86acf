-- Quick match: pair with a waiting ticket, or wait (server/room/matching.py's `partner`:
-- the same rule, atomically). Tickets are "id|player|bot|rating|at|name", oldest first.
-- KEYS: 1 the game's queue. ARGV: 1 this ticket, 2 now, 3 RANGE_START, 4 RANGE_WIDENS,
-- 5 UNRATED.
local function parse(ticket)
  local id, player, _, rating, at = string.match(ticket, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|')
  if not id then return nil end
  return id, player, tonumber(rating) or tonumber(ARGV[5]), tonumber(at) or 0
end
local me_id, me_player, me_rating = parse(ARGV[1])
local now, start, widens = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local waiting = redis.call('LRANGE', KEYS[1], 0, -1)
local best, best_miss, best_gap = nil, nil, nil
for _, other in ipairs(waiting) do
  local id, player, rating, at = parse(other)
  if id and id ~= me_id and (me_player == '' or player ~= me_player) then
    local gap = math.abs(rating - me_rating)
    local reach = start + widens * math.max(0, now - at)
    local miss = math.max(0, gap - reach)
    if best == nil or miss < best_miss or (miss == best_miss and gap < best_gap) then
      best, best_miss, best_gap = other, miss, gap
    end
  end
end
if best then
  redis.call('LREM', KEYS[1], 1, best)
  return best
end
redis.call('RPUSH', KEYS[1], ARGV[1])
return false
