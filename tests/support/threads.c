/* run_threads (threads.h). */
#include "threads.h"

#include <pthread.h>
#include <string.h>

#include "check.h"

void run_threads(unsigned count, void *(*body)(void *))
{
    pthread_t threads[count];
    for (unsigned t = 0; t < count; t++) {
        int error = pthread_create(&threads[t], NULL, body, (void *)(uintptr_t)(t + 1));
        REQUIRE_MSG(error == 0, "pthread_create: %s", strerror(error));
    }
    for (unsigned t = 0; t < count; t++)
        pthread_join(threads[t], NULL);
}
