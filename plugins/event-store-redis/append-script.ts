// The append, as one Lua script so that Redis runs it atomically: the next seq of the name, the
// stream entry `<seq>-0`, the task index, and the trim to the cap all happen in one step.
//
// KEYS: counter, events, task-first, task-last (keys.ts; one hash slot).
// ARGV: cap (0: none), task, type, timestamp, payload (JSON).
//
// The counter is the name's high-water mark; should it ever be behind the stream (a key lost to
// eviction or an operator), the stream's last id wins, so XADD never sees an id it refuses.

export const APPEND_SCRIPT = `
local seq = redis.call('INCR', KEYS[1])
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #tail > 0 then
  local last = tonumber(string.match(tail[1][1], '^(%d+)-'))
  if last >= seq then
    seq = last + 1
    redis.call('SET', KEYS[1], seq)
  end
end
redis.call('XADD', KEYS[2], seq .. '-0', 't', ARGV[2], 'y', ARGV[3], 'ts', ARGV[4], 'p', ARGV[5])
redis.call('HSETNX', KEYS[3], ARGV[2], seq)
redis.call('ZADD', KEYS[4], seq, ARGV[2])
local cap = tonumber(ARGV[1])
if cap > 0 and seq > cap then
  local keepFrom = seq - cap + 1
  redis.call('XTRIM', KEYS[2], 'MINID', keepFrom .. '-0')
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. keepFrom)
  for _, task in ipairs(gone) do
    redis.call('HDEL', KEYS[3], task)
    redis.call('ZREM', KEYS[4], task)
  end
end
return seq
`;
