/* A planted difference for `hotlift compare`: prints how many lines its
 * /proc/self/maps has. Natively that is the kernel's few mappings; under
 * hotlift the process also holds hotlift's own (code cache, ring, ...), so
 * stdout differs and compare must report it.
 *
 * With an argument the difference goes elsewhere: `stderr` prints the line
 * to stderr instead, `status` exits with the count (plus 1, below 256)
 * and prints nothing. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 2;
    int lines = 0, c;
    while ((c = getc(f)) != EOF)
        lines += c == '\n';
    fclose(f);
    if (argc > 1 && strcmp(argv[1], "status") == 0)
        return 1 + lines % 255;
    fprintf(argc > 1 && strcmp(argv[1], "stderr") == 0 ? stderr : stdout,
            "/proc/self/maps has %d lines\n", lines);
    return 0;
}
