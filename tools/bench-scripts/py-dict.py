# Dicts and strings in Python: word frequencies and bigrams over a text
# file, string building and formatting. Deterministic output (sorted).
import sys

words = {}
bigrams = {}
lengths = {}
upper = 0
with open(sys.argv[1], encoding="latin-1") as f:
    for line in f:
        prev = None
        for w in line.split():
            lw = w.lower()
            words[lw] = words.get(lw, 0) + 1
            if w != lw:
                upper += 1
            if prev is not None:
                key = prev + " " + lw
                bigrams[key] = bigrams.get(key, 0) + 1
            prev = lw
            n = len(lw)
            lengths[n] = lengths.get(n, 0) + 1

top = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:15]
for w, c in top:
    print("%-12s %8d" % (w, c))
btop = sorted(bigrams.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
print("|".join("%s=%d" % kv for kv in btop))
print("words", sum(words.values()), "distinct", len(words), "bigrams", len(bigrams),
      "upper", upper)
print(",".join("%d:%d" % (k, lengths[k]) for k in sorted(lengths)))
rev = {}
for w, c in words.items():
    rev.setdefault(w[::-1][:3], []).append(c)
print("suffix groups", len(rev), max(sum(v) for v in rev.values()))
