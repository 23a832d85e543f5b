/* mremap-near-code: a data mapping right below code grows with
 * mremap(MREMAP_MAYMOVE).
 *
 * The kernel cannot grow it in place (the code page is in the way), so it
 * moves it: the code above is untouched and keeps running. glibc's malloc
 * does this with its mmap'd chunks, which sit just below a library's text
 * (sqlite3 growing its page cache). A translator that treats the grown
 * range [old, old + new_len) as changed throws its translations away for
 * nothing; tests/profile.rs checks that this program's run flushes none.
 */
#include "common.h"
#include <sys/mman.h>

typedef int (*fn_t)(void);

int main(void) {
    unsigned char *r = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    unsigned char *code = r + 4096;
    /* mov eax, 7; ret */
    static const unsigned char fn[] = {0xb8, 7, 0, 0, 0, 0xc3};
    memcpy(code, fn, sizeof fn);
    CHECK(mprotect(code, 4096, PROT_READ | PROT_EXEC) == 0);
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += ((fn_t)code)();
    for (int i = 0; i < 4096; i++)
        r[i] = (unsigned char)(i * 7);
    unsigned char *d = r;
    size_t len = 4096;
    for (int k = 0; k < 3; k++) {
        unsigned char *n = mremap(d, len, 2 * len, MREMAP_MAYMOVE);
        CHECK(n != MAP_FAILED);
        d = n;
        len *= 2;
        for (int i = 0; i < 100; i++)
            sum += ((fn_t)code)();
    }
    int same = 1;
    for (int i = 0; i < 4096; i++)
        same &= d[i] == (unsigned char)(i * 7);
    printf("grown to %zu bytes, data kept %d, moved off the code %d, calls sum %d\n",
           len, same, d != r, sum);
    CHECK(same && d != r && sum == 400 * 7);
    CHECK(munmap(d, len) == 0);
    puts("ok");
    return 0;
}
