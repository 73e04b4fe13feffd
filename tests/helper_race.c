/* SPDX-License-Identifier: MIT */
/* helper_race.c: clfree racing blocking clmsync of the same allocation, for
 * test_threads (run with STDCL_ZERO_COPY=0, so that every clmsync really copies
 * between host memory and a device buffer).
 *
 * Each round: a worker thread syncs a 16 MiB allocation to a device and back,
 * blocking (CL_EVENT_WAIT), in a loop; the main thread frees the allocation
 * while it does.  Every call must either succeed or fail with clerror() saying
 * the memory was freed or is unknown; the library must wait for a transfer in
 * flight before it releases the memory (before the fix: SIGSEGV in the driver's
 * copy).  Prints "race ok" and exits 0, or prints what went wrong and exits 1. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <stdcl.h>

enum { ROUNDS = 12, BYTES = 16 << 20 };

typedef struct {
    void* p;
    unsigned dev;
    volatile int syncs;
    int bad;
    char msg[512];
} race_t;

static void* sync_loop(void* arg)
{
    race_t* r = (race_t*)arg;
    for (int i = 0; i < 1000; i++) {
        int dir = (i & 1) ? CL_MEM_HOST : CL_MEM_DEVICE;
        if (!clmsync(stdcpu, r->dev, r->p, dir | CL_EVENT_WAIT)) {
            const char* e = clerror();
            if (!e || !(strstr(e, "freed") || strstr(e, "not memory returned by clmalloc"))) {
                r->bad = 1;
                snprintf(r->msg, sizeof r->msg, "clmsync failed: %s", e ? e : "(no message)");
            }
            return NULL; /* freed: done */
        }
        __atomic_store_n(&r->syncs, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

int main(void)
{
    if (!stdcpu || clgetndev(stdcpu) < 1) {
        printf("no stdcpu\n");
        return 1;
    }
    const char* why = stdcl_context_why(stdcpu);
    if (!why || !strstr(why, "copy mode")) {
        printf("not in copy mode (set STDCL_ZERO_COPY=0): %s\n", why ? why : "?");
        return 1;
    }
    for (int round = 0; round < ROUNDS; round++) {
        race_t r;
        memset(&r, 0, sizeof r);
        r.dev = (unsigned)round % clgetndev(stdcpu);
        r.p = clmalloc(stdcpu, BYTES, 0);
        if (!r.p) {
            printf("clmalloc: %s\n", clerror());
            return 1;
        }
        memset(r.p, round, BYTES);
        pthread_t t;
        if (pthread_create(&t, NULL, sync_loop, &r) != 0) return 1;
        while (__atomic_load_n(&r.syncs, __ATOMIC_ACQUIRE) < 1 + round % 3) sched_yield();
        if (clfree(r.p) != 0) {
            printf("clfree: %s\n", clerror());
            return 1;
        }
        pthread_join(t, NULL);
        if (r.bad) {
            printf("round %d: %s\n", round, r.msg);
            return 1;
        }
    }
    printf("race ok\n");
    return 0;
}
