/* SPDX-License-Identifier: MIT */
/* stdcl_cache.h: libstdcl's program cache on disk, for tools that look after
 * it (stdcl-cache(1) is one): the folder in use, its entries, their
 * checksums, the hit and miss counters, and clearing it.  Programs that only
 * run kernels never need this header: clopen() uses the cache by itself.
 *
 * The folder: $STDCL_CACHE_DIR, else $XDG_CACHE_HOME/stdcl, else
 * ~/.cache/stdcl; STDCL_CACHE=0 turns the cache off for clopen (these calls
 * still reach the folder); STDCL_CACHE_MAX bounds its size.  The calls keep
 * the library's rules: a folder that is not the user's own, or that its group
 * or others can write, is refused; every file is reached through the
 * folder's descriptor without following a symbolic link; only regular files
 * with a cache file's name are removed (verify's remove also removes what
 * has an entry's name but is not a regular file: the link, never what it
 * points to).  Nothing here prints: what the store did that a user may want
 * to know comes back through stdcl_cache_note().
 *
 * Errors as everywhere in libstdcl: NULL or a negative STDCL_E... code, the
 * message in clerror().  Thread safety: calls on different handles may run
 * in parallel; one handle is used by one thread at a time.  Processes may
 * use the folder while these calls run (the files are replaced atomically).
 * See stdcl_cache_open(3). */
#ifndef STDCL_CACHE_H
#define STDCL_CACHE_H

#include <stdint.h>
#include <time.h>

#include <stdcl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open cache folder (opaque). */
typedef struct stdcl_cache stdcl_cache;

/* One file of the folder named like an entry.  The strings belong to the
 * call that hands the structure over: valid until the callback returns. */
typedef struct stdcl_cache_entry {
    char key[65];               /* the key: 64 hex digits (the file's name) */
    int regular;                /* 1: a regular file; 0: something else with
                                   an entry's name (problem says what) */
    uint64_t bytes;             /* the file's size */
    struct timespec last_used;  /* its modification time: the LRU clock */
    unsigned ndevices;          /* devices the entry holds binaries for */
    const char* device;         /* the first device's name, "?" if unknown */
    const char* origin;         /* where the source came from, "" if unknown */
    const char* problem;        /* NULL, or why the entry is not usable:
                                   "a symbolic link", "checksum mismatch ..." */
    int removed;                /* stdcl_cache_verify with remove: it was */
} stdcl_cache_entry;

/* Called for each entry; a non-zero return stops the walk (and the call
 * returns that value). */
typedef int (*stdcl_cache_entry_fn)(const stdcl_cache_entry* entry, void* arg);

/* The folder's state. */
typedef struct stdcl_cache_info {
    const char* dir;         /* the folder */
    int enabled;             /* 0 when STDCL_CACHE=0 (or no folder) turns it off */
    const char* off_reason;  /* why not enabled, else "" */
    uint64_t entries;        /* entry files */
    uint64_t bytes;          /* their size */
    uint64_t max_bytes;      /* STDCL_CACHE_MAX (0: no bound) */
    uint64_t hits;           /* clopen calls served from the cache */
    uint64_t misses;         /* clopen calls that compiled and stored */
} stdcl_cache_info;

/* The folder the library uses, from the environment (see above).  Returns a
 * string valid until the next call in this thread, or NULL when there is no
 * folder (neither STDCL_CACHE_DIR, XDG_CACHE_HOME nor HOME is set). */
STDCL_API const char* stdcl_cache_dir(void);

/* Opens the cache folder dir (NULL: stdcl_cache_dir()).  A folder that does
 * not exist is an empty cache (nothing is created).  Returns NULL if dir is
 * NULL and there is no folder (STDCL_ENOENT), or the folder exists but is
 * refused: not a folder, not the user's own, or writable by its group or
 * others (STDCL_EINVAL).  Malformed STDCL_CACHE* variables give notes. */
STDCL_API stdcl_cache* stdcl_cache_open(const char* dir);

/* Closes the handle; NULL is ignored. */
STDCL_API void stdcl_cache_close(stdcl_cache* cache);

/* Calls fn(entry, arg) for each entry, least recently used first, then for
 * what has an entry's name but is not a regular file (problem says what it
 * is).  Reads only each entry's header: problem is set when that cannot be
 * read.  Returns 0, fn's non-zero value, or a negative code. */
STDCL_API int stdcl_cache_list(stdcl_cache* cache, stdcl_cache_entry_fn fn, void* arg);

/* Fills *info.  Returns 0 or a negative code. */
STDCL_API int stdcl_cache_stat(stdcl_cache* cache, stdcl_cache_info* info);

/* Checks every entry as clopen would before loading it (size, format, key,
 * checksum) and calls fn (which may be NULL) for each: problem is NULL for a
 * good entry.  With remove non-zero, a damaged one is removed first (entry
 * ->removed; a failure to remove is in problem).  Returns the number of
 * damaged entries still in the folder (0: all good, or all removed), or a
 * negative code. */
STDCL_API long stdcl_cache_verify(stdcl_cache* cache, int remove, stdcl_cache_entry_fn fn,
                                  void* arg);

/* Removes every entry, temporary file, unheld lock file and the counters.
 * Returns the number of entries removed, or a negative code (STDCL_ENOENT:
 * the folder does not exist). */
STDCL_API long stdcl_cache_clear(stdcl_cache* cache);

/* The next thing the store noted (a file that is not a cache file left
 * alone, a malformed variable ...), oldest first, or NULL when there is none.
 * Valid until the next call on the handle. */
STDCL_API const char* stdcl_cache_note(stdcl_cache* cache);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STDCL_CACHE_H */
