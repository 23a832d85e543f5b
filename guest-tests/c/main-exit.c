/* main-exit: the main thread calls pthread_exit while another thread
 * finishes the work; the process ends when that thread does, with status
 * 0 (a translator must end its own main thread without ending the
 * process, and still write the profile).
 */
#include "common.h"
#include <pthread.h>
#include <unistd.h>

static void *worker(void *arg) {
    (void)arg;
    usleep(20000);
    puts("worker done");
    return NULL;
}

int main(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    puts("main thread leaving");
    fflush(stdout);
    pthread_exit(NULL);
}
