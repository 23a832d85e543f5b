/* A planted difference for `hotlift compare`: prints how many lines its
 * /proc/self/maps has. Natively that is the kernel's few mappings; under
 * hotlift the process also holds hotlift's own (code cache, ring, ...), so
 * stdout differs and compare must report it. */
#include <stdio.h>

int main(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 2;
    int lines = 0, c;
    while ((c = getc(f)) != EOF)
        lines += c == '\n';
    fclose(f);
    printf("/proc/self/maps has %d lines\n", lines);
    return 0;
}
