/* SPDX-License-Identifier: MIT */
/* helper_cache.c: a program test_cache runs in fresh processes to exercise
 * the on-disk program cache.
 *
 *   helper_cache [-o options | -O options] [-s] [-b barrier_dir] [-n count] file...
 *
 * Opens each kernel file in stddev (with clopen, or with clsopen of its text
 * when -s is given; with CLLD_NOBUILD + clbuild(options) when -o is given,
 * with clopen_opt or clsopen_opt when -O is given),
 * runs its kernel `k(__global int* out)` over 64 work-items on every device,
 * and prints one line per file: "result <file> <sum of out[]>".  Whether the
 * cache hit or missed is learned from the STDCL_TRACE=cache lines the test
 * asks for on stderr.  -b: before opening anything, waits until `count` (-n,
 * default 2) helpers have arrived in barrier_dir, so that they miss the same
 * key at the same moment.  Exits 0, or 1 with clerror() on stderr. */
#include <stdcl.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N = 64 };

static int count_entries(const char* dir)
{
    DIR* d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    struct dirent* de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "ready.", 6) == 0) n++;
    closedir(d);
    return n;
}

/* Arrives at the barrier in dir and waits (up to 60 s) for the others. */
static void barrier(const char* dir, int count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ready.%ld", dir, (long)getpid());
    FILE* f = fopen(path, "w");
    if (f) fclose(f);
    struct timespec ts = {0, 1000 * 1000};
    for (int i = 0; i < 60000 && count_entries(dir) < count; i++) nanosleep(&ts, NULL);
}

static char* slurp(const char* path)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int run_file(const char* file, const char* options, const char* open_options, int from_text)
{
    void* h;
    int flags = options ? CLLD_NOBUILD : CLLD_NOW;
    if (from_text) {
        char* text = slurp(file);
        if (!text) {
            fprintf(stderr, "helper_cache: cannot read %s\n", file);
            return 1;
        }
        h = open_options ? clsopen_opt(stddev, text, open_options, flags) : clsopen(stddev, text, flags);
        free(text);
    } else {
        h = open_options ? clopen_opt(stddev, file, open_options, flags) : clopen(stddev, file, flags);
    }
    if (h && options) h = clbuild(stddev, h, options, 0);
    if (!h) {
        fprintf(stderr, "helper_cache: open %s: %s\n", file, clerror());
        return 1;
    }
    cl_kernel k = clsym(stddev, h, "k", 0);
    if (!k) {
        fprintf(stderr, "helper_cache: clsym k: %s\n", clerror());
        return 1;
    }
    long first = 0;
    for (unsigned d = 0; d < clgetndev(stddev); d++) {
        int* out = (int*)clmalloc(stddev, N * sizeof(int), CL_MEM_WO);
        if (!out) {
            fprintf(stderr, "helper_cache: clmalloc: %s\n", clerror());
            return 1;
        }
        clndrange_t ndr = clndrange_init1d(0, N, 16);
        if (!clforka(stddev, d, k, &ndr, CL_EVENT_WAIT, out) || !clmsync(stddev, d, out, CL_MEM_HOST | CL_EVENT_WAIT)) {
            fprintf(stderr, "helper_cache: run on device %u: %s\n", d, clerror());
            return 1;
        }
        long sum = 0;
        for (int i = 0; i < N; i++) sum += out[i];
        clfree(out);
        if (d == 0) first = sum;
        if (sum != first) {
            fprintf(stderr, "helper_cache: device %u gives %ld, device 0 %ld\n", d, sum, first);
            return 1;
        }
    }
    printf("result %s %ld\n", file, first);
    clclose(stddev, h);
    return 0;
}

int main(int argc, char** argv)
{
    const char* options = NULL;
    const char* open_options = NULL;
    const char* barrier_dir = NULL;
    int from_text = 0, count = 2, opt;
    while ((opt = getopt(argc, argv, "o:O:sb:n:")) != -1) {
        switch (opt) {
        case 'o': options = optarg; break;
        case 'O': open_options = optarg; break;
        case 's': from_text = 1; break;
        case 'b': barrier_dir = optarg; break;
        case 'n': count = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: helper_cache [-o options | -O options] [-s] [-b dir] [-n count] file...\n");
            return 2;
        }
    }
    if (!stddev) {
        fprintf(stderr, "helper_cache: no stddev\n");
        return 1;
    }
    if (barrier_dir) barrier(barrier_dir, count);
    for (int i = optind; i < argc; i++)
        if (run_file(argv[i], options, open_options, from_text) != 0) return 1;
    return 0;
}
