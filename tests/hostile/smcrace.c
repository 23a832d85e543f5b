/* Threads of a JIT-like guest store into a page that also holds code they
 * run (a JVM's nmethod header beside its code): each store is one hotlift
 * must see as a write into translated code, while another thread's store
 * into the same page may be taking the page's protection away at the same
 * moment (issue 19, item 11). Prints the counter, which only the stores
 * change; a store hotlift mistook for a guest fault kills the run with
 * SIGSEGV. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum { THREADS = 4, ROUNDS = 3000 };

static unsigned char *page;

static void *worker(void *arg)
{
    long sum = 0;
    int (*fn)(void) = (int (*)(void))page;
    unsigned *counter = (unsigned *)(page + 2048 + 64 * (long)arg);
    for (int i = 0; i < ROUNDS; i++) {
        sum += fn();
        __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add((unsigned *)(page + 3072), 1, __ATOMIC_SEQ_CST);
    }
    return (void *)sum;
}

int main(void)
{
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 2;
    static const unsigned char code[] = {0xb8, 0x2a, 0, 0, 0, 0xc3}; /* mov eax,42; ret */
    memcpy(page, code, sizeof code);
    pthread_t t[THREADS];
    for (long k = 0; k < THREADS; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    long total = 0;
    for (int k = 0; k < THREADS; k++) {
        void *r;
        pthread_join(t[k], &r);
        total += (long)r;
    }
    printf("sum %ld shared %u\n", total, *(unsigned *)(page + 3072));
    for (int k = 0; k < THREADS; k++)
        printf("thread %d %u\n", k, *(unsigned *)(page + 2048 + 64 * k));
    return 0;
}
