-- tests/real_programs.rs: lua5.4 runs this natively and under hotlift.
-- Deterministic: no os.time, os.clock or math.random without a seed.

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib(24)", fib(24))

-- Tables, sorting with a comparator, string building.
local words = {}
for w in ("the quick brown fox jumps over the lazy dog again and again"):gmatch("%a+") do
  words[#words + 1] = w
end
table.sort(words, function(a, b) if #a ~= #b then return #a > #b end return a < b end)
print(table.concat(words, ","))
local count = {}
for _, w in ipairs(words) do count[w] = (count[w] or 0) + 1 end
local keys = {}
for k in pairs(count) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do io.write(k, "=", count[k], " ") end
print()

-- Closures and upvalues.
local function counter()
  local n = 0
  return function(step) n = n + (step or 1); return n end
end
local c1, c2 = counter(), counter()
for i = 1, 10 do c1(i) end
print("counters", c1(0), c2(5))

-- Coroutines (a generator of primes).
local primes = coroutine.wrap(function()
  local found = {}
  local n = 2
  while true do
    local prime = true
    for _, p in ipairs(found) do
      if p * p > n then break end
      if n % p == 0 then prime = false; break end
    end
    if prime then found[#found + 1] = n; coroutine.yield(n) end
    n = n + 1
  end
end)
local ps = {}
for _ = 1, 25 do ps[#ps + 1] = primes() end
print("primes", table.concat(ps, " "))

-- Metatables: a small vector type.
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({x = a.x + b.x, y = a.y + b.y}, V) end
V.__tostring = function(v) return string.format("(%g, %g)", v.x, v.y) end
function V.new(x, y) return setmetatable({x = x, y = y}, V) end
local sum = V.new(0, 0)
for i = 1, 100 do sum = sum + V.new(i, 1 / i) end
print("vector", tostring(sum))

-- Strings: formatting, patterns, gsub with a function.
print(string.format("%5.2f|%-8s|%08x|%q|%e", math.pi, "left", 48879, "a\nb", 1e-7))
local s = ("key1=val1; key2 = val2;key3=  v3"):gsub("%s*(%w+)%s*=%s*(%w+)%s*;?",
  function(k, v) return v:upper() .. ":" .. k .. " " end)
print(s)
print(("hotlift"):rep(3, "-"), ("Hello"):byte(1, -1))
print(utf8.char(72, 228, 8364, 128512), utf8.len("häh€"))

-- Integers and floats.
print(7 // 2, 7.0 // 2, 7 % -3, -7 % 3, 2^53, math.maxinteger, math.mininteger // -1)
print(math.floor(-3.5), math.ceil(-3.5), math.fmod(7, -3), math.tointeger(3.0), 1e308 * 10)
local acc = 0
for i = 1, 200000 do acc = (acc * 31 + i) % 1000000007 end
print("acc", acc)

-- Errors.
local ok, err = pcall(function() error({code = 42}) end)
print("pcall", ok, type(err), err.code)
ok, err = pcall(function() local t = nil; return t.x end)
print("pcall", ok, (err:gsub("^.-:%d+: ", "")))
print(select("#", 1, nil, 3), select(2, "a", "b", "c"))

-- A deterministic pseudo-random sequence.
math.randomseed(42)
local r = {}
for i = 1, 5 do r[i] = math.random(1, 1000) end
print("random", table.concat(r, " "))
