/* smc-read-into-code: read() into memory that holds translated code.
 *
 * The kernel, not a CPU store, writes the data, so a translator that
 * write-protects code pages must make the syscall succeed in full (a
 * hotlift regression: read() must not stop short at the protected page)
 * and must notice that code it translated was overwritten.
 *   1. a 200-byte read into a buffer that starts 100 bytes before the page
 *      holding a translated function: all 200 bytes arrive, the function
 *      is intact;
 *   2. a read whose bytes are new code, straight over that function: the
 *      next call runs the new code.
 */
#include "common.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*fn_t)(void);

int main(void) {
    unsigned char data[256];
    for (int i = 0; i < 256; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    static const unsigned char code2[] = {0xb8, 2, 0, 0, 0, 0xc3}; /* mov eax, 2; ret */
    int fd = open("input", O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, data, sizeof data) == (ssize_t)sizeof data);
    CHECK(write(fd, code2, sizeof code2) == (ssize_t)sizeof code2);

    unsigned char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    static const unsigned char code1[] = {0xb8, 1, 0, 0, 0, 0xc3};
    unsigned char *fp = p + 4096 + 2048;        /* code in the second page */
    memcpy(fp, code1, sizeof code1);
    fn_t f = (fn_t)fp;
    int a = f();

    /* 1 */
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    ssize_t n = read(fd, p + 4096 - 100, 200);  /* straddles into the code page */
    int same = memcmp(p + 4096 - 100, data, 200) == 0;
    int b = f();
    printf("call %d; read across into the code page: %zd bytes, intact %d; call %d\n", a, n,
           same, b);
    CHECK(a == 1 && n == 200 && same && b == 1);

    /* 2 */
    CHECK(lseek(fd, 256, SEEK_SET) == 256);
    n = read(fd, fp, sizeof code2);
    int c = f();
    printf("read new code over the function: %zd bytes; call %d\n", n, c);
    CHECK(n == (ssize_t)sizeof code2 && c == 2);

    close(fd);
    puts("ok");
    return 0;
}
