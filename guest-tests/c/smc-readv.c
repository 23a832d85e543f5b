/* smc-readv: readv() into a buffer that runs into a page holding code that
 * has run (so a translator may have write-protected it) reads in full.
 *
 * The iovec's buffer starts 100 bytes before the end of the first page of an
 * RWX mapping and covers the start of the second, where a small function
 * lives and was called. Natively readv returns 200; the function still
 * works afterwards.
 */
#define _GNU_SOURCE
#include "common.h"
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

int main(void) {
    unsigned char *p = mmap(0, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    static const unsigned char ret1[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov eax, 1; ret */
    memcpy(p + 4096 + 2048, ret1, sizeof ret1);
    int (*f)(void) = (int (*)(void))(p + 4096 + 2048);
    int a = f();
    int fd = open("data", O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    unsigned char junk[300];
    memset(junk, 0x5a, sizeof junk);
    CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    struct iovec v = {p + 4096 - 100, 200};
    ssize_t n = readv(fd, &v, 1);
    printf("f() = %d, readv = %zd, f() again = %d\n", a, n, f());
    CHECK(n == 200 && p[4096 + 99] == 0x5a && f() == 1);
    puts("ok");
    return 0;
}
