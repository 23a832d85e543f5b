/* dlopen: loads shared libraries at run time (build/lib/libhlplugin*.so,
 * found through the program's RUNPATH $ORIGIN/lib), calls into them and
 * back, looks symbols up, walks the loaded objects, unloads and loads
 * again. Under hotlift each library's code is translated like any other
 * and its module is recorded (tests/dynlink.rs checks the profile). */
#include "common.h"

#include <dlfcn.h>
#include <link.h>

static uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static const char *base(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int show_object(struct dl_phdr_info *info, size_t size, void *data) {
    int *n = data;
    int loads = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        loads += info->dlpi_phdr[i].p_type == PT_LOAD;
    printf("  object %d: %s (%d PT_LOADs, tls module %zu)\n", (*n)++,
           info->dlpi_name[0] ? base(info->dlpi_name) : "(program)", loads,
           info->dlpi_tls_modid);
    return 0;
}

typedef uint64_t (*run_fn)(uint64_t (*)(uint64_t), int);

/* Loads `lib`, runs its plugin function, and unloads it unless `keep`. */
static void *use(const char *lib, int mode, int n, int keep) {
    void *h = dlopen(lib, mode);
    if (!h) {
        printf("dlopen %s: %s\n", lib, dlerror());
        exit(1);
    }
    run_fn run = (run_fn)dlsym(h, "hl_plugin_run");
    const char *name = dlsym(h, "hl_plugin_name");
    CHECK(run && name);
    Dl_info info;
    CHECK(dladdr((void *)run, &info) != 0);
    printf("%s: %s from %s (symbol %s): %016llx\n", lib, name, base(info.dli_fname),
           info.dli_sname, (unsigned long long)run(mix, n));
    if (!keep)
        CHECK(dlclose(h) == 0);
    return h;
}

int main(int argc, char **argv) {
    int n = count_mode(argc, argv) ? 20 : 200;
    void *first = use("libhlplugin.so", RTLD_NOW, n, 1);
    int (*calls)(void) = (int (*)(void))dlsym(first, "hl_plugin_calls");
    CHECK(calls && calls() == 1);
    int objects = 0;
    dl_iterate_phdr(show_object, &objects);
    printf("loaded objects: %d\n", objects);
    CHECK(dlclose(first) == 0);

    /* Probably mapped where the first plugin was. */
    use("libhlplugin2.so", RTLD_LAZY, n / 4, 0);
    use("libhlplugin.so", RTLD_LAZY | RTLD_LOCAL, n / 2, 0);

    if (dlopen("libhlnope.so", RTLD_NOW) == NULL)
        printf("dlopen libhlnope.so: %s\n", dlerror());
    size_t (*len)(const char *) = (size_t (*)(const char *))dlsym(RTLD_DEFAULT, "strlen");
    CHECK(len != NULL);
    printf("strlen through dlsym: %zu\n", len("hotlift"));
    return 0;
}
