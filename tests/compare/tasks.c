/* A planted difference for `hotlift compare`: prints how many threads its
 * process has (field 20 of /proc/self/stat, which `ps` reads). Natively
 * that is its one thread; under hotlift the process also holds hotlift's
 * monitor thread, which the stat file counts, so stdout differs and
 * compare must report it, and so do its syscalls (a `sched_yield` per
 * thread). (It counted /proc/self/maps lines until hotlift showed the
 * guest only its own mappings, then /proc/self/task entries until hotlift
 * left its threads out of that listing, then the `Threads:` line of
 * /proc/self/status until hotlift counted only the guest's there.)
 *
 * With an argument the difference goes elsewhere: `stderr` prints the line
 * to stderr instead, `status` exits with the count (plus 1, below 256)
 * and prints nothing. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return 2;
    char line[1024];
    int tasks = 0;
    if (fgets(line, sizeof line, f)) {
        /* Past the command name's closing parenthesis: state is field 3,
         * num_threads field 20. */
        char *p = strrchr(line, ')');
        for (int field = 2; p && field < 20; field++)
            p = strchr(p + 1, ' ');
        if (p)
            tasks = atoi(p + 1);
    }
    fclose(f);
    /* The syscalls differ too: one sched_yield per thread counted. */
    for (int i = 0; i < tasks; i++)
        sched_yield();
    if (argc > 1 && strcmp(argv[1], "status") == 0)
        return 1 + tasks % 255;
    fprintf(argc > 1 && strcmp(argv[1], "stderr") == 0 ? stderr : stdout,
            "/proc/self/stat counts %d threads\n", tasks);
    return 0;
}
