/* SPDX-License-Identifier: MIT */
/* example_args.h: the command-line parser of the small examples
 * (mixed_pointers, nbody_tile, template_reduce, tiled_conv).  Plain C99,
 * header only: copy it along with an example, or into a program of your own.
 *
 * A program lists its options in a table, in the order the usage line
 * shows them, and calls example_args once:
 *
 *     int n = 1000, check = 0;
 *     const example_opt opts[] = {
 *         EXAMPLE_INT("-n", "count", &n, 1, INT_MAX),
 *         EXAMPLE_FLAG("--check", &check),
 *         EXAMPLE_END
 *     };
 *     if (!example_args(argc, argv, opts))
 *         return 2;
 *
 * A flag sets its int to 1.  An option with a value takes the next argument:
 * a whole number within [lo, hi] (EXAMPLE_INT into an int, EXAMPLE_LONG into
 * a long), or a string (EXAMPLE_STRING).  Variables keep their values for
 * options not given.  For an unknown option, a missing value or a value that
 * is not a whole number, example_args prints the usage line made from the
 * table ("usage: prog [-n count] [--check]"), for a number out of range
 * "prog: -n must be at least 1" (or "... from lo to hi"; hi = INT_MAX or
 * LONG_MAX is no limit of the option's own), both on stderr, and returns 0;
 * the examples then exit with status 2. */
#ifndef EXAMPLE_ARGS_H
#define EXAMPLE_ARGS_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdcl.h>

typedef struct {
    const char* name; /* "-n", "--check"; NULL ends the table */
    const char* meta; /* what the value is, for the usage line; NULL: a flag */
    int* ival; /* a flag, or an int value */
    long* lval; /* a long value */
    const char** sval; /* a string value */
    long lo, hi; /* the range of a number */
} example_opt;

#define EXAMPLE_FLAG(opt, var)                                                                                         \
    {                                                                                                                  \
        .name = (opt), .ival = (var)                                                                                   \
    }
#define EXAMPLE_INT(opt, what, var, min, max)                                                                          \
    {                                                                                                                  \
        .name = (opt), .meta = (what), .ival = (var), .lo = (min), .hi = (max)                                         \
    }
#define EXAMPLE_LONG(opt, what, var, min, max)                                                                         \
    {                                                                                                                  \
        .name = (opt), .meta = (what), .lval = (var), .lo = (min), .hi = (max)                                         \
    }
#define EXAMPLE_STRING(opt, what, var)                                                                                 \
    {                                                                                                                  \
        .name = (opt), .meta = (what), .sval = (var)                                                                   \
    }
#define EXAMPLE_END                                                                                                    \
    {                                                                                                                  \
        .name = NULL                                                                                                   \
    }

/* Prints "usage: prog [-n count] [--check]" on stderr, from the table. */
static inline void example_usage(const char* prog, const example_opt* opts)
{
    fprintf(stderr, "usage: %s", prog);
    for (const example_opt* o = opts; o->name; o++) {
        if (o->meta)
            fprintf(stderr, " [%s %s]", o->name, o->meta);
        else
            fprintf(stderr, " [%s]", o->name);
    }
    fputc('\n', stderr);
}

/* Stores the options of argv[1..argc-1] through the table.  Returns 1, or 0
 * after a message on stderr (see the top of the file). */
static inline int example_args(int argc, char** argv, const example_opt* opts)
{
    for (int i = 1; i < argc; i++) {
        const example_opt* o = opts;
        while (o->name && strcmp(o->name, argv[i]) != 0) o++;
        if (!o->name || (o->meta && i + 1 >= argc)) {
            example_usage(argv[0], opts);
            return 0;
        }
        if (!o->meta) {
            *o->ival = 1;
            continue;
        }
        const char* value = argv[++i];
        if (o->sval) {
            *o->sval = value;
            continue;
        }
        char* end;
        errno = 0;
        long x = strtol(value, &end, 10);
        if (end == value || *end || errno) {
            example_usage(argv[0], opts);
            return 0;
        }
        if (x < o->lo || x > o->hi) {
            int unbounded = o->hi == (o->lval ? LONG_MAX : INT_MAX); /* no upper limit of its own */
            if (!unbounded)
                fprintf(stderr, "%s: %s must be from %ld to %ld\n", argv[0], o->name, o->lo, o->hi);
            else if (x < o->lo)
                fprintf(stderr, "%s: %s must be at least %ld\n", argv[0], o->name, o->lo);
            else
                fprintf(stderr, "%s: %s %s is too large\n", argv[0], o->name, value);
            return 0;
        }
        if (o->lval)
            *o->lval = x;
        else
            *o->ival = (int)x;
    }
    return 1;
}

/* The default context a "-c cpu|gpu|dev" option names: stdcpu, stdgpu or
 * stddev.  NULL after a message on stderr when the name is none of the three
 * (*bad_name set, where bad_name is not NULL: a usage error) or the context
 * has no device. */
static inline CLCONTEXT* example_context(const char* name, int* bad_name)
{
    int bad = strcmp(name, "cpu") && strcmp(name, "gpu") && strcmp(name, "dev");
    if (bad_name) *bad_name = bad;
    if (bad) return NULL;
    CLCONTEXT* cp = !strcmp(name, "cpu") ? stdcpu : !strcmp(name, "gpu") ? stdgpu : stddev;
    if (!cp || clgetndev(cp) == 0) {
        const char* why = clerror();
        fprintf(stderr, "no OpenCL device in std%s: %s\n", name, why ? why : "empty context");
        return NULL;
    }
    return cp;
}

#endif /* EXAMPLE_ARGS_H */
