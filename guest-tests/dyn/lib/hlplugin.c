/* libhlplugin.so: the first plugin dyn/dlopen.c loads at run time. It calls
 * back into the program through a function pointer and into libc (through
 * its PLT, resolved lazily or at dlopen time). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char hl_plugin_name[] = "first plugin";

static int counter;

uint64_t hl_plugin_run(uint64_t (*mix)(uint64_t), int n) {
    char buf[64];
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "item %d of %d", i, n);
        h = mix(h ^ strlen(buf)) + (uint64_t)buf[5];
    }
    counter++;
    return h;
}

int hl_plugin_calls(void) { return counter; }
