/* libhlplugin2.so: the second plugin dyn/dlopen.c loads, after unloading
 * the first, so it is likely mapped where the first one was (the profile
 * must still tell the two apart). */
#include <stdint.h>
#include <stdlib.h>

const char hl_plugin_name[] = "second plugin";

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t hl_plugin_run(uint64_t (*mix)(uint64_t), int n) {
    uint64_t v[64];
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        v[i] = mix((uint64_t)i * 7919u);
    qsort(v, (size_t)n, sizeof v[0], cmp);
    uint64_t h = 0;
    for (int i = 0; i < n; i++)
        h = h * 31 + (v[i] >> 40);
    return h;
}
