/* thread-name: a new thread has the name of the thread that made it (the
 * program's, natively), until it renames itself; hotlift named its guest
 * threads `hotlift-guest`. */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <sys/prctl.h>

static void *named(void *arg) {
    char name[16] = {0};
    CHECK(prctl(PR_GET_NAME, name) == 0);
    printf("thread: %s\n", name);
    CHECK(prctl(PR_SET_NAME, "worker") == 0);
    CHECK(prctl(PR_GET_NAME, name) == 0);
    printf("renamed: %s\n", name);
    return arg;
}

int main(void) {
    char name[16] = {0};
    CHECK(prctl(PR_GET_NAME, name) == 0);
    printf("main: %s\n", name);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, named, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(prctl(PR_GET_NAME, name) == 0);
    printf("main after: %s\n", name);
    return 0;
}
