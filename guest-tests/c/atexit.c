/* atexit: start-up and shut-down code: constructors (with priorities),
 * destructors, atexit and on_exit handlers in reverse order, .init_array
 * and .fini_array entries, stdio flushing at exit, and exit status 3 from
 * exit() called inside main. Expected: exit:3.
 */
#include "common.h"

static char log_buf[256];
static void note(const char *s) { strcat(log_buf, s); }

__attribute__((constructor(200))) static void ctor_late(void) { note("C200 "); }
__attribute__((constructor(101))) static void ctor_early(void) { note("C101 "); }
__attribute__((constructor)) static void ctor_default(void) { note("C "); }
__attribute__((destructor)) static void dtor(void) { printf("destructor ran; log: %s\n", log_buf); }

static void init_array_fn(int argc, char **argv, char **envp) {
    (void)argv;
    (void)envp;
    note(argc > 0 ? "IA " : "ia ");
}
__attribute__((section(".init_array"), used)) static void (*init_entry)(int, char **, char **) = init_array_fn;
static void fini_array_fn(void) { printf("fini_array ran\n"); }
__attribute__((section(".fini_array"), used)) static void (*fini_entry)(void) = fini_array_fn;

static void handler1(void) { printf("atexit handler 1 (registered first, runs last)\n"); }
static void handler2(void) { printf("atexit handler 2\n"); }
static void on_exit_handler(int status, void *arg) {
    printf("on_exit handler: status %d arg %s\n", status, (const char *)arg);
}

int main(void) {
    printf("main sees log: %s\n", log_buf);
    CHECK(strstr(log_buf, "C101 ") == log_buf);
    atexit(handler1);
    atexit(handler2);
    on_exit(on_exit_handler, "hello");
    printf("buffered output must be flushed at exit");   /* no newline: stdio buffer */
    exit(3);
}
