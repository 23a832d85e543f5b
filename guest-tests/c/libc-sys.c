/* libc-sys: system calls through glibc, including the ones glibc routes
 * through the vDSO (clock_gettime, gettimeofday, time, getcpu).
 *
 * Checks consistency rather than printing values: time sources agree with
 * each other and move forward, pids and uids are stable, uname matches
 * between calls, resource limits read back what was set, sysconf answers
 * the fixed questions, getrandom fills its buffer, and errno is right for
 * failing calls.
 *
 * "count" (the form tests/exact.rs single-steps) leaves out the
 * vDSO's clock_gettime(CLOCK_MONOTONIC/REALTIME) and gettimeofday: they
 * read the time under a sequence lock and retry when the kernel updates it
 * meanwhile, so how many instructions they run depends on timing (under
 * single-stepping a quarter of the calls retry). time(), clock_getres()
 * and getcpu() stay: the vDSO answers them without a retry loop.
 */
#include "common.h"
#include <errno.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec; }

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    struct timespec m0, m1, r0, c0;
    CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0) == 0);
    if (!count) {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &m0) == 0);
        CHECK(clock_gettime(CLOCK_REALTIME, &r0) == 0);
        long backwards = 0;
        struct timespec prev = m0;
        for (int i = 0; i < 10000; i++) {
            CHECK(clock_gettime(CLOCK_MONOTONIC, &m1) == 0);
            backwards += ns(&m1) < ns(&prev);
            prev = m1;
        }
        printf("CLOCK_MONOTONIC went backwards %ld times in 10000 calls\n", backwards);
        struct timeval tv;
        CHECK(gettimeofday(&tv, NULL) == 0);
        time_t t = time(NULL);
        printf("gettimeofday and time() within 2 s of CLOCK_REALTIME: %d %d\n",
               labs(tv.tv_sec - r0.tv_sec) <= 2, labs(t - r0.tv_sec) <= 2);
    } else {
        time_t t1 = time(NULL), t2 = time(NULL);
        printf("time() does not go backwards: %d\n", t2 >= t1);
    }
    struct timespec res;
    CHECK(clock_getres(CLOCK_MONOTONIC, &res) == 0);
    printf("CLOCK_MONOTONIC resolution <= 1 us: %d\n", ns(&res) <= 1000);
    struct timespec nap = {0, 2000000};
    if (!count) {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &m0) == 0);
        CHECK(nanosleep(&nap, NULL) == 0);
        CHECK(clock_gettime(CLOCK_MONOTONIC, &m1) == 0);
        printf("nanosleep(2 ms) took at least 2 ms: %d\n", ns(&m1) - ns(&m0) >= 2000000);
    } else {
        CHECK(nanosleep(&nap, NULL) == 0);
        printf("nanosleep(2 ms) returned 0\n");
    }
    unsigned cpu = 99, node = 99;
    CHECK(getcpu(&cpu, &node) == 0);
    printf("getcpu gives a cpu below the online count: %d\n", (long)cpu < sysconf(_SC_NPROCESSORS_CONF));
    CHECK(sched_getcpu() >= 0);

    pid_t pid = getpid();
    CHECK(pid == getpid() && pid == gettid());
    CHECK(getppid() != pid);
    printf("getpid stable, gettid == getpid, getppid differs\n");
    printf("getuid == geteuid: %d, getgid == getegid: %d\n", getuid() == geteuid(), getgid() == getegid());
    printf("getpgrp == getpgid(0): %d, getsid(0) > 0: %d\n", getpgrp() == getpgid(0), getsid(0) > 0);

    struct utsname u1, u2;
    CHECK(uname(&u1) == 0 && uname(&u2) == 0);
    CHECK(memcmp(&u1, &u2, sizeof u1) == 0);
    printf("uname: %s %s\n", u1.sysname, u1.machine);

    printf("sysconf: pagesize %ld, clk_tck %ld, open_max > 0 %d\n", sysconf(_SC_PAGESIZE),
           sysconf(_SC_CLK_TCK), sysconf(_SC_OPEN_MAX) > 0);
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = 100 < old ? 100 : old;
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    struct rlimit back;
    CHECK(getrlimit(RLIMIT_NOFILE, &back) == 0);
    printf("RLIMIT_NOFILE reads back what was set: %d\n", back.rlim_cur == rl.rlim_cur);
    CHECK(getrlimit(RLIMIT_CORE, &rl) == 0);
    printf("RLIMIT_CORE soft limit %llu\n", (unsigned long long)rl.rlim_cur);

    unsigned char rnd[64];
    memset(rnd, 0, sizeof rnd);
    CHECK(getrandom(rnd, sizeof rnd, 0) == sizeof rnd);
    int zeros = 0;
    for (int i = 0; i < 64; i++)
        zeros += rnd[i] == 0;
    printf("getrandom filled 64 bytes (not all zero): %d\n", zeros < 64);

    errno = 0;
    CHECK(chdir("/nonexistent/dir") == -1);
    printf("chdir(/nonexistent/dir): errno ENOENT %d\n", errno == ENOENT);
    CHECK(dup2(1, -1) == -1 && errno == EBADF);
    printf("dup2(1, -1): errno EBADF\n");
    int fd = dup(1);
    CHECK(fd > 2);
    CHECK(close(fd) == 0);
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    printf("sched_getaffinity: at least one cpu %d\n", CPU_COUNT(&set) > 0);
    CHECK(sched_yield() == 0);
    puts("ok");
    return 0;
}
