-- Lua 5.4: numeric loops, tables as arrays and maps, closures, string
-- building. Deterministic output: map contents are printed sorted.

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function sieve(n)
  local flags, count = {}, 0
  for i = 2, n do flags[i] = true end
  for i = 2, n do
    if flags[i] then
      count = count + 1
      for j = i * i, n, i do flags[j] = nil end
    end
  end
  return count
end

local function words(n)
  local syl = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "an", "er"}
  local x, freq, parts = 7, {}, {}
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    local k = 1 + (x >> 8) % 3
    for j = 1, k do parts[j] = syl[1 + (x >> (4 * j)) % #syl] end
    local w = table.concat(parts, "", 1, k)
    freq[w] = (freq[w] or 0) + 1
  end
  local keys = {}
  for w in pairs(freq) do keys[#keys + 1] = w end
  table.sort(keys, function(a, b)
    if freq[a] ~= freq[b] then return freq[a] > freq[b] end
    return a < b
  end)
  local out = {}
  for i = 1, 8 do out[i] = keys[i] .. "=" .. freq[keys[i]] end
  return #keys, table.concat(out, " ")
end

local function objects(n)
  local function make(i)
    local self = {v = i}
    function self.step(d) self.v = (self.v * 31 + d) % 1000003 return self.v end
    return self
  end
  local objs, acc = {}, 0
  for i = 1, 64 do objs[i] = make(i) end
  for i = 1, n do acc = acc ~ objs[1 + i % 64].step(i) end
  return acc
end

print("fib", fib(29))
print("primes", sieve(2000000))
print("words", words(600000))
print("objects", objects(3000000))
