"""The Lua scripts of the Redis store (``_redis.py``), which is where their arguments are built.

Each store call is one script, so that Redis runs it whole, with nothing of another client's
in between: a commit checks every expected version and message id first and writes only if all
hold, a read sees one state of every key it touches, and a claim of a dead replica's runs is
taken by exactly one replica. A script must not fail once it has begun to write (Redis keeps
what a failed script wrote before the error), so every check comes first, the caller's mistakes
(a version that does not advance by one, event numbers with a gap) included, and only then,
if all hold, the writes.

Strings are compared by :data:`PRELUDE`'s ``lt``, byte by byte, never with Lua's ``<``: that
follows the server's locale (Redis sets ``LC_COLLATE`` from its environment), while the store
contract orders keys as Python orders ``str``, which is the byte order of their UTF-8.
"""

__all__ = ["COMMIT", "OWED", "READ", "RENEW"]

#: Names and helpers every script shares. ``ARGV[1]`` is the key prefix, ``ARGV[2]`` this
#: store's replica id.
PRELUDE = r"""
local P, ME = ARGV[1], ARGV[2]
local function task(k) return P .. ':{' .. k .. '}' end
local function lt(a, b)
  if a == b then return false end
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function owner_of(entry)
  -- an outbox entry's value: "<attempts> <replica that owns it>"
  return string.match(entry, '^(%d+) (.*)$')
end
"""

#: ``ARGV[3]``: the lease in milliseconds (0: give it up: its expiry becomes 0, which every other
#: replica may claim from at once, however recent its own tenure; a lease that merely lapsed
#: waits for that, see the claims). Returns the new expiry (server time, ms). A replica whose
#: lease had lapsed (or that held none) starts a new tenure: ``PREFIX:since`` keeps when it
#: began, and the lease's length, for the claims.
RENEW = (
    PRELUDE
    + r"""
local now, lease = now_ms(), tonumber(ARGV[3])
if lease == 0 then
  redis.call('ZADD', P .. ':replicas', 0, ME)
  redis.call('HDEL', P .. ':since', ME)
  return 0
end
local held = redis.call('ZSCORE', P .. ':replicas', ME)
if not held or tonumber(held) < now then
  redis.call('HSET', P .. ':since', ME, now .. ' ' .. lease)
end
redis.call('ZADD', P .. ':replicas', now + lease, ME)
return now + lease
"""
)

#: ``ARGV[3]`` a task's key, ``ARGV[4]`` a config id, ``ARGV[5]`` an event number (20 digits),
#: ``ARGV[6]`` an event number (20 digits) or "". Returns 1 if another replica (live or lapsed)
#: still owes a notification of that task to that config for an earlier event, or (``ARGV[6]``
#: given) this replica does for an event after ``ARGV[6]`` and before ``ARGV[5]``, else 0: a
#: range of each holder's outbox index, whose members sort as (key, config id, number) do.
OWED = (
    PRELUDE
    + r"""
local low = ARGV[3] .. '\0' .. ARGV[4] .. '\0'
local high = low .. ARGV[5]
local MINE_AFTER = ARGV[6]
for _, h in ipairs(redis.call('SMEMBERS', P .. ':holders')) do
  local from = '[' .. low
  if h == ME then from = MINE_AFTER ~= '' and '(' .. low .. MINE_AFTER or nil end
  if from then
    local offset = 0
    while true do
      local batch = redis.call('ZRANGEBYLEX', P .. ':outbox:' .. h, from, '(' .. high,
        'LIMIT', offset, 64)
      for _, member in ipairs(batch) do
        -- (another config's id may start with this one's and a NUL: its number is not next)
        if #member == #high and string.match(string.sub(member, #low + 1), '^%d+$') then
          return 1
        end
      end
      if #batch < 64 then break end
      offset = offset + 64
    end
  end
end
return 0
"""
)

#: ``ARGV[3]`` is the commit's token: once applied, ``PREFIX:done:TOKEN`` exists for 10 s,
#: so that a store whose connection broke before the answer came can learn whether it was.
#: The writes after it, each a tag and its fields (``_redis._commit_arguments``):
#:
#: - ``P`` key, expected, version, record, run, running (0/1), terminal (0/1), state,
#:   updated_at (µs), seq, principal, tenant, context id, the four listing index keys, the
#:   owner's message-id hash key, then n and the n message ids of the record, then n and n
#:   (event number, event) pairs, then n and n outbox fields (``config id \0 seq``);
#: - ``D`` key, expected;
#: - ``S`` key, outbox field, attempts ("" when it leaves the outbox).
#:
#: Returns 1 if applied, 0 if an expected version or a message id did not hold (nothing is
#: written then), an error whose text starts with ``A2A_USAGE`` for a caller's mistake, or
#: one that starts with ``NOPERM`` for a command or channel the user may not use (nothing is
#: written then either).
COMMIT = (
    PRELUDE
    + r"""
local writes = {}
local TOKEN = ARGV[3]
local i = 4
while i <= #ARGV do
  local kind = ARGV[i]
  if kind == 'P' then
    local w = {kind = 'P', key = ARGV[i + 1], expected = tonumber(ARGV[i + 2]),
      version = ARGV[i + 3], record = ARGV[i + 4], run = ARGV[i + 5], running = ARGV[i + 6],
      terminal = ARGV[i + 7], state = ARGV[i + 8], updated = ARGV[i + 9], seq = ARGV[i + 10],
      principal = ARGV[i + 11], tenant = ARGV[i + 12], context = ARGV[i + 13],
      ix = {ARGV[i + 14], ARGV[i + 15], ARGV[i + 16], ARGV[i + 17]}, mh = ARGV[i + 18]}
    i = i + 19
    w.msgs, w.nmsgs = i + 1, tonumber(ARGV[i])
    i = i + 1 + w.nmsgs
    w.evs, w.nevs = i + 1, tonumber(ARGV[i])
    i = i + 1 + 2 * w.nevs
    w.outs, w.nouts = i + 1, tonumber(ARGV[i])
    i = i + 1 + w.nouts
    writes[#writes + 1] = w
  elseif kind == 'D' then
    writes[#writes + 1] = {kind = 'D', key = ARGV[i + 1], expected = tonumber(ARGV[i + 2])}
    i = i + 3
  elseif kind == 'S' then
    writes[#writes + 1] = {kind = 'S', key = ARGV[i + 1], field = ARGV[i + 2],
      attempts = ARGV[i + 3]}
    i = i + 4
  else
    return redis.error_reply('A2A_USAGE unknown write ' .. tostring(kind))
  end
end

-- Check everything, in the batch's order (a Delete frees its key for a later Put), before
-- writing anything.
local stored = {}   -- key -> {version, message ids held, last event number}
local deleted = {}
local claimed = {}  -- owner's message hash .. NUL .. id -> the key claiming it in this batch
for _, w in ipairs(writes) do
  if w.kind ~= 'S' then
    local T = task(w.key)
    local s = stored[w.key]
    if not s then
      local h = redis.call('HMGET', T, 'version', 'top', 'principal', 'tenant')
      s = {tonumber(h[1]) or 0, redis.call('LLEN', T .. ':msg'), tonumber(h[2]) or 0,
        h[3], h[4]}
      stored[w.key] = s
    end
    if s[1] ~= w.expected then return 0 end
    if w.kind == 'D' then
      deleted[w.key] = true
      stored[w.key] = {0, 0, 0, false, false}
    else
      if tonumber(w.version) ~= w.expected + 1 then
        return redis.error_reply('A2A_USAGE a Put must advance the version by exactly one')
      end
      if s[1] > 0 and (s[4] ~= w.principal or s[5] ~= w.tenant) then
        return redis.error_reply('A2A_USAGE a Put must keep the task\'s owner')
      end
      if w.nmsgs < s[2] then
        return redis.error_reply(
          'A2A_USAGE a Put must keep the task\'s message ids, adding any after them')
      end
      local top = s[3]
      for j = 0, w.nevs - 1 do
        -- Consecutive numbers from the stored top: XADD could refuse nothing half way.
        if tonumber(ARGV[w.evs + 2 * j]) ~= top + 1 then
          return redis.error_reply(
            'A2A_USAGE logged events must continue the task\'s log without a gap')
        end
        top = top + 1
      end
      w.held = s[2]
      for j = s[2], w.nmsgs - 1 do
        local id = ARGV[w.msgs + j]
        local c = w.mh .. '\0' .. id
        local by = claimed[c]
        if by and by ~= w.key then return 0 end
        claimed[c] = w.key
        local holder = redis.call('HGET', w.mh, id)
        if holder and holder ~= w.key and not deleted[holder] then return 0 end
      end
      stored[w.key] = {tonumber(w.version), w.nmsgs, top, w.principal, w.tenant}
    end
  end
end

-- Redis keeps what a script wrote before a command of it failed, so a command this user may
-- not run (or a channel it may not publish to) must be found before the first write: on Redis
-- 7 and later, each command the writes use is checked against this commit's keys, and each
-- doorbell's channel. (Reads were checked by running them.)
if redis.acl_check_cmd and #writes > 0 then
  local T = task(writes[1].key)
  local needs = {
    {'hset', T, 'f', 'v'}, {'hsetnx', T .. ':out', 'f', 'v'}, {'hdel', T, 'f'},
    {'del', T}, {'xadd', T .. ':ev', '0-1', 'e', 'v'}, {'rpush', T .. ':msg', 'v'},
    {'zadd', P .. ':terminal', '0', 'v'}, {'zrem', P .. ':terminal', 'v'},
    {'sadd', P .. ':holders', 'v'}, {'set', P .. ':done:' .. TOKEN, 'v'},
  }
  for _, c in ipairs(needs) do
    if not redis.acl_check_cmd(unpack(c)) then
      return redis.error_reply('NOPERM this user may not run \'' .. c[1] .. '\' on the key '
        .. c[2])
    end
  end
  for _, w in ipairs(writes) do
    if w.kind ~= 'S' then
      local channel = task(w.key) .. ':ring'
      if not redis.acl_check_cmd('publish', channel, 'v') then
        return redis.error_reply('NOPERM this user may not run \'publish\' on the channel '
          .. channel)
      end
    end
  end
end

-- Each task's doorbell carries the events the commit logged for it (number, then text, a line
-- each), so that a replica following it need not read them back: unless they are large, when
-- the ring says only who rang, and whoever follows reads the log.
local RING_BYTES = 65536
local rung, ringing = {}, {}
local function ring(k, w)
  local r = rung[k]
  if not r then
    r = {parts = {}, size = 0}
    rung[k] = r
    ringing[#ringing + 1] = k
  end
  if w and r.parts then
    for j = 0, w.nevs - 1 do
      local text = ARGV[w.evs + 2 * j + 1]
      r.size = r.size + #text
      r.parts[#r.parts + 1] = ARGV[w.evs + 2 * j]
      r.parts[#r.parts + 1] = text
    end
    if r.size > RING_BYTES then r.parts = nil end
  elseif not w then
    r.parts = nil  -- deleted: nothing to follow
  end
end

local function forget(k)
  local T = task(k)
  local old = redis.call('HMGET', T, 'ix_o', 'ix_oc', 'ix_os', 'ix_ocs', 'mh', 'runner')
  if old[1] then
    for j = 1, 4 do
      if old[j] then redis.call('ZREM', old[j], k) end
    end
    redis.call('ZREM', P .. ':terminal', k)
    for _, id in ipairs(redis.call('LRANGE', T .. ':msg', 0, -1)) do
      if redis.call('HGET', old[5], id) == k then redis.call('HDEL', old[5], id) end
    end
    if old[6] and old[6] ~= '' then redis.call('ZREM', P .. ':running:' .. old[6], k) end
  end
  local owed = redis.call('HGETALL', T .. ':out')
  for j = 1, #owed, 2 do
    local _, owner = owner_of(owed[j + 1])
    redis.call('ZREM', P .. ':outbox:' .. owner, k .. '\0' .. owed[j])
  end
  redis.call('DEL', T, T .. ':ev', T .. ':msg', T .. ':out')
end

local function put(w)
  local k, T = w.key, task(w.key)
  local old = redis.call('HMGET', T, 'version', 'run', 'running', 'runner', 'updated',
    'terminal', 'ix_o', 'ix_oc', 'ix_os', 'ix_ocs')
  local runner = old[4] or ''
  if w.running == '1' then
    -- A run this store's commit starts (or finds without a runner) is this replica's; a write
    -- to a run under way elsewhere (a push config set on this replica) leaves it where it is.
    if not old[1] or old[3] ~= '1' or old[2] ~= w.run or runner == '' then
      if runner ~= '' and runner ~= ME then
        redis.call('ZREM', P .. ':running:' .. runner, k)
      end
      runner = ME
      redis.call('ZADD', P .. ':running:' .. ME, 0, k)
      redis.call('SADD', P .. ':holders', ME)
    end
  else
    if runner ~= '' then redis.call('ZREM', P .. ':running:' .. runner, k) end
    runner = ''
  end
  for j = 1, 4 do
    local was, now = old[6 + j], w.ix[j]
    if was and was ~= now then redis.call('ZREM', was, k) end
    if was ~= now or old[5] ~= w.updated then redis.call('ZADD', now, w.updated, k) end
  end
  if w.terminal == '1' then
    if old[6] ~= '1' or old[5] ~= w.updated then
      redis.call('ZADD', P .. ':terminal', w.updated, k)
    end
  elseif old[6] == '1' then
    redis.call('ZREM', P .. ':terminal', k)
  end
  local top = nil
  for j = 0, w.nevs - 1 do
    local seq = ARGV[w.evs + 2 * j]
    redis.call('XADD', T .. ':ev', '0-' .. seq, 'e', ARGV[w.evs + 2 * j + 1])
    top = seq
  end
  for j = w.held, w.nmsgs - 1 do
    local id = ARGV[w.msgs + j]
    redis.call('RPUSH', T .. ':msg', id)
    redis.call('HSET', w.mh, id, k)
  end
  for j = 0, w.nouts - 1 do
    local field = ARGV[w.outs + j]
    if redis.call('HSETNX', T .. ':out', field, '0 ' .. ME) == 1 then
      redis.call('ZADD', P .. ':outbox:' .. ME, 0, k .. '\0' .. field)
      redis.call('SADD', P .. ':holders', ME)
    end
  end
  redis.call('HSET', T, 'record', w.record, 'version', w.version, 'run', w.run,
    'running', w.running, 'runner', runner, 'state', w.state, 'terminal', w.terminal,
    'updated', w.updated, 'seq', w.seq, 'principal', w.principal, 'tenant', w.tenant,
    'context', w.context, 'ix_o', w.ix[1], 'ix_oc', w.ix[2], 'ix_os', w.ix[3],
    'ix_ocs', w.ix[4], 'mh', w.mh)
  if top then redis.call('HSET', T, 'top', top) end
end

local function sent(w)
  local O = task(w.key) .. ':out'
  local entry = redis.call('HGET', O, w.field)
  if not entry then return end  -- delivered already, or its task is gone
  local _, owner = owner_of(entry)
  if w.attempts == '' then
    redis.call('HDEL', O, w.field)
    redis.call('ZREM', P .. ':outbox:' .. owner, w.key .. '\0' .. w.field)
  else
    redis.call('HSET', O, w.field, w.attempts .. ' ' .. owner)
  end
end

for _, w in ipairs(writes) do
  if w.kind == 'P' then
    put(w)
    ring(w.key, w)
  elseif w.kind == 'D' then
    forget(w.key)
    ring(w.key)
  else
    sent(w)
  end
end
for _, k in ipairs(ringing) do
  -- The ring names who committed first: a replica ignores its own, which it knows of already.
  local parts = rung[k].parts
  local message = ME
  if parts and #parts > 0 then message = ME .. '\n' .. table.concat(parts, '\n') end
  redis.call('PUBLISH', task(k) .. ':ring', message)
end
if TOKEN ~= '' then redis.call('SET', P .. ':done:' .. TOKEN, '1', 'PX', 10000) end
return 1
"""
)

#: ``ARGV[3..]``: task key, named key, message (hash key, id), listing (on, index key, lowest
#: score, cursor on, cursor score, cursor key, how many), expiry (on, latest score, limit),
#: log (on, key, after, limit), running (on, limit, after), outbox (on, limit, after); "" or
#: "0" where a part is not asked for (``_redis._read_arguments``).
#:
#: Returns {task, named, by message, listing, expiry, log, running, outbox}: a record or
#: false for the first three; {total, records...}; {next score or false, records...};
#: {id, event, id, event...}; {records...}; {outbox member, attempts, record, event, ...}.
READ = (
    PRELUDE
    + r"""
local function record(k)
  return redis.call('HGET', task(k), 'record')
end

local function listing(index, low, cursor, cscore, ckey, want)
  local total = redis.call('ZCOUNT', index, low, '+inf')
  local keys = {}
  if cursor == '1' then
    -- Newest first strictly after (cscore, ckey): those at cscore below ckey, then older ones.
    if low == '-inf' or tonumber(cscore) >= tonumber(low) then
      local same = redis.call('ZRANGEBYSCORE', index, cscore, cscore)
      for j = #same, 1, -1 do
        if #keys == want then break end
        if lt(same[j], ckey) then keys[#keys + 1] = same[j] end
      end
    end
    if #keys < want then
      local older = redis.call('ZREVRANGEBYSCORE', index, '(' .. cscore, low,
        'LIMIT', 0, want - #keys)
      for _, k in ipairs(older) do keys[#keys + 1] = k end
    end
  else
    keys = redis.call('ZREVRANGEBYSCORE', index, '+inf', low, 'LIMIT', 0, want)
  end
  local found = {total}
  for _, k in ipairs(keys) do found[#found + 1] = record(k) end
  return found
end

local function expiry(latest, limit)
  local items = redis.call('ZRANGE', P .. ':terminal', 0, limit, 'WITHSCORES')
  local found = {false}
  for j = 1, #items, 2 do
    if tonumber(items[j + 1]) > tonumber(latest) or #found - 1 == limit then
      found[1] = items[j + 1]
      break
    end
    found[#found + 1] = record(items[j])
  end
  return found
end

local function log(k, after, limit)
  local found = {}
  if limit <= 0 then return found end
  local entries = redis.call('XRANGE', task(k) .. ':ev', '(0-' .. after, '+', 'COUNT', limit)
  for _, entry in ipairs(entries) do
    found[#found + 1] = entry[1]
    found[#found + 1] = entry[2][2]
  end
  return found
end

-- Claims: what replicas whose lease lapsed (or who never held one) still hold is taken over
-- by this one, so that two replicas never both take over one run or one notification.
-- A replica with a lease claims only what lapsed while it held its own, or once it has held its
-- own for a whole lease: after Redis was away longer than a lease, every lease has lapsed, and
-- the replicas that are alive renew theirs within a third of one; until then, none is taken
-- for dead. (A store that holds no lease, a tool, claims whatever lapsed.)
local lapsed = nil
local function lapsed_holders()
  if lapsed then return lapsed end
  lapsed = {}
  local now = now_ms()
  local tenure = redis.call('HGET', P .. ':since', ME)
  local since, span = nil, nil
  if tenure then
    local a, b = string.match(tenure, '^(%d+) (%d+)$')
    since, span = tonumber(a), tonumber(b)
  end
  local seasoned = since == nil or now - since >= span
  for _, h in ipairs(redis.call('SMEMBERS', P .. ':holders')) do
    local until_ms = redis.call('ZSCORE', P .. ':replicas', h)
    until_ms = until_ms and tonumber(until_ms)
    if not until_ms then  -- it never held a lease (a tool's store): nothing to wait for
      lapsed[#lapsed + 1] = h
    elseif until_ms == 0 then  -- it gave its lease up (a clean stop): nothing to wait for
      lapsed[#lapsed + 1] = h
    elseif until_ms < now and (seasoned or since <= until_ms) then
      lapsed[#lapsed + 1] = h
    end
  end
  return lapsed
end

local function candidates(set, limit, after)
  local low = after == '' and '-' or '(' .. after
  local found = {}
  for _, h in ipairs(lapsed_holders()) do
    for _, m in ipairs(redis.call('ZRANGEBYLEX', P .. set .. h, low, '+', 'LIMIT', 0, limit)) do
      found[#found + 1] = {m, h}
    end
  end
  table.sort(found, function(a, b) return lt(a[1], b[1]) end)
  return found
end

local function settle_holders()
  -- A lapsed replica that holds nothing any more leaves the holders.
  for _, h in ipairs(lapsed_holders()) do
    if h ~= ME and redis.call('ZCARD', P .. ':running:' .. h) == 0
        and redis.call('ZCARD', P .. ':outbox:' .. h) == 0 then
      redis.call('SREM', P .. ':holders', h)
      redis.call('HDEL', P .. ':since', h)
    end
  end
end

local function claim_running(limit, after)
  local found = {}
  for _, c in ipairs(candidates(':running:', limit, after)) do
    if #found == limit then break end
    local k, h = c[1], c[2]
    local T = task(k)
    redis.call('ZREM', P .. ':running:' .. h, k)
    local now = redis.call('HMGET', T, 'running', 'runner', 'record')
    if now[1] == '1' and (now[2] or '') == h then
      redis.call('HSET', T, 'runner', ME)
      redis.call('ZADD', P .. ':running:' .. ME, 0, k)
      redis.call('SADD', P .. ':holders', ME)
      found[#found + 1] = now[3]
    end
  end
  return found
end

local function claim_outbox(limit, after)
  local found = {}
  for _, c in ipairs(candidates(':outbox:', limit, after)) do
    if #found == 4 * limit then break end
    local member, h = c[1], c[2]
    local cut = string.find(member, '\0', 1, true)
    local k, field = string.sub(member, 1, cut - 1), string.sub(member, cut + 1)
    local T = task(k)
    redis.call('ZREM', P .. ':outbox:' .. h, member)
    local entry = redis.call('HGET', T .. ':out', field)
    local attempts, owner = false, false
    if entry then attempts, owner = owner_of(entry) end
    if owner == h then
      local seq = string.match(string.sub(field, -20), '^0*(.+)$')
      local event = redis.call('XRANGE', T .. ':ev', '0-' .. seq, '0-' .. seq)[1]
      redis.call('HSET', T .. ':out', field, attempts .. ' ' .. ME)
      redis.call('ZADD', P .. ':outbox:' .. ME, 0, member)
      redis.call('SADD', P .. ':holders', ME)
      if event then
        found[#found + 1] = member
        found[#found + 1] = attempts
        found[#found + 1] = record(k)
        found[#found + 1] = event[2][2]
      end
    end
  end
  return found
end

local reply = {false, false, false, false, false, {}, {}, {}}
if ARGV[3] ~= '' then reply[1] = record(ARGV[3]) end
if ARGV[4] ~= '' then reply[2] = record(ARGV[4]) end
if ARGV[5] ~= '' then
  local holder = redis.call('HGET', ARGV[5], ARGV[6])
  if holder then reply[3] = record(holder) end
end
if ARGV[7] == '1' then
  reply[4] = listing(ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], tonumber(ARGV[13]))
end
if ARGV[14] == '1' then reply[5] = expiry(ARGV[15], tonumber(ARGV[16])) end
if ARGV[17] == '1' then reply[6] = log(ARGV[18], ARGV[19], tonumber(ARGV[20])) end
if ARGV[21] == '1' then reply[7] = claim_running(tonumber(ARGV[22]), ARGV[23]) end
if ARGV[24] == '1' then reply[8] = claim_outbox(tonumber(ARGV[25]), ARGV[26]) end
if lapsed then settle_holders() end
return reply
"""
)
