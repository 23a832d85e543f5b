/* A planted difference for `hotlift compare`: prints how many threads its
 * process has (/proc/self/task). Natively that is its one thread; under
 * hotlift the process also holds hotlift's monitor thread, so stdout
 * differs and compare must report it. (It counted /proc/self/maps lines
 * until hotlift showed the guest only its own mappings.)
 *
 * With an argument the difference goes elsewhere: `stderr` prints the line
 * to stderr instead, `status` exits with the count (plus 1, below 256)
 * and prints nothing. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 2;
    int tasks = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        tasks += e->d_name[0] != '.';
    closedir(d);
    if (argc > 1 && strcmp(argv[1], "status") == 0)
        return 1 + tasks % 255;
    fprintf(argc > 1 && strcmp(argv[1], "stderr") == 0 ? stderr : stdout,
            "/proc/self/task has %d entries\n", tasks);
    return 0;
}
