/* SPDX-License-Identifier: MIT */
/* test_cache.c: the on-disk program cache, seen from fresh processes
 * (helper_cache) as a second run of a program sees it: hits, rebuilds when an
 * included header or the options (clbuild's, clopen_opt's) change, damaged
 * entries, a folder that cannot be written,
 * two processes building one key, the size bound, the stdcl-cache tool and
 * the API it uses (stdcl_cache.h, called in this process).
 * Each test has its own cache folder and kernel folder (at one path, made
 * afresh for each: fixture_root).  Hit or miss is read
 * from the STDCL_TRACE=cache lines ("stdcl[cache]: hit ..." / "... miss ..."). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>

#include <stdcl.h>
#include <stdcl_cache.h>

#include "test_util.h"

#define HIT "stdcl[cache]: hit "
#define MISS "stdcl[cache]: miss "

static const char* k_kernel = "#include \"val.h\"\n"
                              "__kernel void k(__global int* out)\n"
                              "{\n"
                              "    int i = get_global_id(0);\n"
                              "    out[i] = i * VAL + SALT;\n"
                              "}\n";

/* One test's folders: root/src holds k.cl and val.h, root/cache the cache. */
typedef struct {
    char* root;
    char src[PATH_MAX];
    char cache[PATH_MAX];
    char kfile[PATH_MAX + 16];
    char header[PATH_MAX + 16];
} fixture;

static void write_header(fixture* f, int val)
{
    char text[128];
    snprintf(text, sizeof text, "#define VAL %d\n#ifndef SALT\n#define SALT 0\n#endif\n", val);
    assert_int_equal(tu_write_file(f->header, text), 0);
}

/* Removes the folder dir and what it holds (a folder a test made read-only
 * is made writable again first); 0 when done. */
static int remove_tree(const char* dir)
{
    char cmd[2 * PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    return system(cmd);
}

/* The folder every test of this run has as its own, made afresh by each
 * (CMocka runs them one at a time): the kernels' -I options are then the same
 * from test to test, so that PoCL's own cache compiles each kernel text once
 * a run instead of once a test.  The process id keeps two runs apart. */
static char* fixture_root(void)
{
    const char* t = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/stdcl-test-cache.%ld", t && *t ? t : "/tmp", (long)getpid());
    if (remove_tree(dir) != 0 || mkdir(dir, 0700) != 0) return NULL;
    return strdup(dir);
}

static int setup(void** state)
{
    fixture* f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->root = fixture_root();
    if (!f->root) return -1;
    snprintf(f->src, sizeof f->src, "%s/src", f->root);
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->root);
    snprintf(f->kfile, sizeof f->kfile, "%s/k.cl", f->src);
    snprintf(f->header, sizeof f->header, "%s/val.h", f->src);
    if (mkdir(f->src, 0755) != 0) return -1;
    if (tu_write_file(f->kfile, k_kernel) != 0) return -1;
    char text[128];
    snprintf(text, sizeof text, "#define VAL %d\n#ifndef SALT\n#define SALT 0\n#endif\n", 3);
    if (tu_write_file(f->header, text) != 0) return -1;
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = *state;
    if (remove_tree(f->root) != 0) print_message("teardown: could not remove %s\n", f->root);
    free(f->root);
    free(f);
    return 0;
}

/* The sum helper_cache prints for k.cl with VAL val and SALT salt. */
static long expected_sum(int val, int salt) { return (long)val * (63 * 64 / 2) + 64L * salt; }

/* The number after "result <file> " in out, or LONG_MIN. */
static long result_of(const char* out)
{
    const char* p = strstr(out, "result ");
    if (!p) return LONG_MIN;
    p = strchr(p + 7, ' ');
    return p ? strtol(p + 1, NULL, 10) : LONG_MIN;
}

/* Runs helper_cache on k.cl with the fixture's cache folder and tracing,
 * plus the extra arguments (NULL-terminated, before the file) and extra
 * environment; asserts that it succeeded and printed the expected sum. */
static void run_helper_env(fixture* f, tu_proc* r, const char* const* extra_args, const char* const* extra_env, int val,
                           int salt)
{
    char cache_env[PATH_MAX + 32];
    snprintf(cache_env, sizeof cache_env, "STDCL_CACHE_DIR=%s", f->cache);
    const char* env[16];
    size_t ne = 0;
    env[ne++] = cache_env;
    env[ne++] = "STDCL_TRACE=cache";
    for (size_t i = 0; extra_env && extra_env[i] && ne < 15; i++) env[ne++] = extra_env[i];
    env[ne] = NULL;
    const char* args[16];
    size_t na = 0;
    for (size_t i = 0; extra_args && extra_args[i] && na < 14; i++) args[na++] = extra_args[i];
    args[na++] = f->kfile;
    args[na] = NULL;
    tu_spawn(r, tu_helper("helper_cache"), args, env, NULL, 120);
    if (r->status != 0 || result_of(r->out) != expected_sum(val, salt)) tu_proc_dump(r, "helper_cache");
    assert_int_equal(r->status, 0);
    assert_int_equal(result_of(r->out), expected_sum(val, salt));
}

static void run_helper(fixture* f, tu_proc* r, int val) { run_helper_env(f, r, NULL, NULL, val, 0); }

/* The cache folder's entries: count, and the path of the first one. */
static int entries(const char* dir, char* first, size_t size)
{
    DIR* d = opendir(dir);
    int n = 0;
    if (first && size) first[0] = '\0';
    if (!d) return 0;
    struct dirent* de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len == 70 && strcmp(de->d_name + 64, ".clbin") == 0) {
            if (n == 0 && first) snprintf(first, size, "%s/%s", dir, de->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static long file_size(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* ------------------------------------------------------------------------ */
/* Files as they are, not through links                                      */
/* ------------------------------------------------------------------------ */

static int is_link(const char* path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int is_regular(const char* path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int exists(const char* path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The number of names in dir other than . and .. (-1: unreadable). */
static int count_names(const char* dir)
{
    DIR* d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent* de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

/* path with its last 6 characters (".clbin") replaced by suffix. */
static void sibling(char* out, size_t size, const char* entry, const char* suffix)
{
    snprintf(out, size, "%.*s%s", (int)(strlen(entry) - 6), entry, suffix);
}

static void write_bytes(const char* path, const unsigned char* p, size_t n)
{
    FILE* fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void put_le(unsigned char* p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char* p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Sets the entry's trailing SHA-256 to that of the bytes before it (with
 * sha256sum), so that only the checks after the checksum can reject it. */
static void resum(unsigned char* p, size_t n, const char* scratch)
{
    assert_true(n > 32);
    write_bytes(scratch, p, n - 32);
    const char* args[] = {scratch, NULL};
    tu_proc r;
    tu_spawn(&r, "/usr/bin/sha256sum", args, NULL, NULL, 30);
    assert_int_equal(r.status, 0);
    for (int i = 0; i < 32; i++) {
        unsigned v;
        assert_int_equal(sscanf(r.out + 2 * i, "%2x", &v), 1);
        p[n - 32 + i] = (unsigned char)v;
    }
    tu_proc_free(&r);
    unlink(scratch);
}

/* Runs once so that the cache holds the entry of k.cl; its path in entry. */
static void make_entry(fixture* f, char* entry, size_t size)
{
    tu_proc r;
    run_helper(f, &r, 3);
    tu_proc_free(&r);
    assert_int_equal(entries(f->cache, entry, size), 1);
}

/* make_entry, then the entry replaced by what make (mkdir, mkfifo) makes
 * with mode. */
static void make_entry_replaced(fixture* f, char* entry, size_t size, int (*make)(const char*, mode_t), mode_t mode)
{
    make_entry(f, entry, size);
    assert_int_equal(unlink(entry), 0);
    assert_int_equal(make(entry, mode), 0);
}

/* make_entry after a first run: the entry's second run was a hit. */
static void make_entry_and_hit(fixture* f, char* entry, size_t size)
{
    tu_proc r;
    run_helper(f, &r, 3); /* a miss */
    tu_proc_free(&r);
    make_entry(f, entry, size); /* a hit */
}

/* Runs helper_cache on k.cl and a copy of it, k2.cl: two builds in one
 * process. */
static void run_two_programs(fixture* f, tu_proc* r)
{
    char second[PATH_MAX + 8];
    snprintf(second, sizeof second, "%s/k2.cl", f->src);
    assert_int_equal(tu_write_file(second, k_kernel), 0);
    const char* args[] = {second, NULL};
    run_helper_env(f, r, args, NULL, 3, 0);
}

/* Runs helper_cache as run_helper_env does (extra arguments and
 * environment, the sum for val and salt): its trace holds has and also, not
 * lacks (each NULL: not checked). */
static void expect_trace_of(fixture* f, const char* const* extra_args, const char* const* extra_env, int val, int salt,
                            const char* has, const char* also, const char* lacks)
{
    tu_proc r;
    run_helper_env(f, &r, extra_args, extra_env, val, salt);
    if (has) assert_contains(r.err, has);
    if (also) assert_contains(r.err, also);
    if (lacks) assert_not_contains(r.err, lacks);
    tu_proc_free(&r);
}

/* expect_trace_of helper_cache with VAL 3 and no extras. */
static void expect_trace(fixture* f, const char* has, const char* also, const char* lacks)
{
    expect_trace_of(f, NULL, NULL, 3, 0, has, also, lacks);
}

/* ------------------------------------------------------------------------ */

static void test_clopen_cache_hit_in_second_process(void** state)
{
    fixture* f = *state;
    expect_trace(f, MISS, NULL, HIT);
    assert_int_equal(entries(f->cache, NULL, 0), 1);

    expect_trace(f, HIT, NULL, MISS);
    assert_int_equal(entries(f->cache, NULL, 0), 1);
}

static void test_clsopen_cache_hit_in_second_process(void** state)
{
    fixture* f = *state;
    /* clsopen gets no file, so the includes resolve through -I options. */
    char opt[PATH_MAX + 8];
    snprintf(opt, sizeof opt, "-I %s", f->src);
    const char* args[] = {"-s", "-o", opt, NULL};
    expect_trace_of(f, args, NULL, 3, 0, MISS, NULL, NULL);
    expect_trace_of(f, args, NULL, 3, 0, HIT, NULL, MISS);
}

static void test_clopen_cache_header_edit_rebuilds(void** state)
{
    fixture* f = *state;
    tu_proc r;
    run_helper(f, &r, 3);
    tu_proc_free(&r);

    write_header(f, 5);
    run_helper(f, &r, 5); /* the new VAL: the build used the edited header */
    assert_contains(r.err, MISS);
    assert_not_contains(r.err, HIT);
    /* The trace names the part of the key that changed. */
    assert_contains(r.err, "val.h");
    assert_contains(r.err, "content changed");
    tu_proc_free(&r);

    expect_trace_of(f, NULL, NULL, 5, 0, HIT, NULL, NULL);
}

/* Every spelling of #include that the OpenCL compiler obeys puts the header in
 * the key: a comment inside the directive, a line splice, the "%:" digraph.  An
 * edited header is a miss, never the binary of the old one. */
static void test_clopen_cache_header_edit_rebuilds_for_every_spelling(void** state)
{
    fixture* f = *state;
    static const char* const spellings[] = {"#/**/include \"val.h\"\n", "# /* c */ include \"val.h\"\n",
                                            "#inc\\\nlude \"val.h\"\n", "%:include \"val.h\"\n"};
    for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; ++k) {
        char kernel[512];
        snprintf(kernel, sizeof kernel, "%s%s", spellings[k], strchr(k_kernel, '\n') + 1);
        assert_int_equal(tu_write_file(f->kfile, kernel), 0);
        write_header(f, 3);
        tu_proc r;
        run_helper(f, &r, 3);
        tu_proc_free(&r);
        write_header(f, 5);
        run_helper(f, &r, 5); /* the new VAL: the build used the edited header */
        if (!strstr(r.err, MISS)) print_message("spelling %zu: %s", k, spellings[k]);
        assert_contains(r.err, MISS);
        assert_contains(r.err, "content changed");
        tu_proc_free(&r);
    }
}

static void test_clopen_cache_option_change_named_in_trace(void** state)
{
    fixture* f = *state;
    const char* a1[] = {"-o", "-D SALT=1", NULL};
    const char* a2[] = {"-o", "-D SALT=2", NULL};
    tu_proc r;
    run_helper_env(f, &r, a1, NULL, 3, 1);
    tu_proc_free(&r);
    expect_trace_of(f, a2, NULL, 3, 2, MISS, "options", NULL);
    expect_trace_of(f, a1, NULL, 3, 1, HIT, NULL, NULL);
}

/* The options given at open (clopen_opt) enter the key as clbuild's do: other
 * options are another entry, the same ones (by either call) the same. */
static void test_clopen_opt_options_are_part_of_the_cache_key(void** state)
{
    fixture* f = *state;
    const char* o1[] = {"-O", "-D SALT=1", NULL};
    const char* o2[] = {"-O", "-D SALT=2", NULL};
    const char* b1[] = {"-o", "-D SALT=1", NULL};
    expect_trace_of(f, o1, NULL, 3, 1, MISS, NULL, NULL);
    assert_int_equal(entries(f->cache, NULL, 0), 1);
    expect_trace_of(f, o2, NULL, 3, 2, MISS, "options", HIT);
    assert_int_equal(entries(f->cache, NULL, 0), 2);
    expect_trace_of(f, o1, NULL, 3, 1, HIT, NULL, MISS);
    expect_trace_of(f, b1, NULL, 3, 1, HIT, NULL, MISS); /* clbuild with the same options */
    /* without options: a third entry */
    expect_trace(f, MISS, NULL, NULL);
    assert_int_equal(entries(f->cache, NULL, 0), 3);
}

static void test_clsopen_opt_options_are_part_of_the_cache_key(void** state)
{
    fixture* f = *state;
    /* clsopen gets no file, so the includes resolve through -I options. */
    char o1[PATH_MAX + 32], o2[PATH_MAX + 32];
    snprintf(o1, sizeof o1, "-I %s -D SALT=4", f->src);
    snprintf(o2, sizeof o2, "-I %s -D SALT=5", f->src);
    const char* a1[] = {"-s", "-O", o1, NULL};
    const char* a2[] = {"-s", "-O", o2, NULL};
    expect_trace_of(f, a1, NULL, 3, 4, MISS, NULL, NULL);
    expect_trace_of(f, a2, NULL, 3, 5, MISS, NULL, HIT);
    assert_int_equal(entries(f->cache, NULL, 0), 2);
    expect_trace_of(f, a2, NULL, 3, 5, HIT, NULL, MISS);
}

/* Damages the only entry with damage(path, size), then checks that the next
 * run notices, rebuilds with the right result, and leaves a good entry. */
static void check_damaged_entry_rebuilt(fixture* f, void (*damage)(const char*, long), const char* reason)
{
    char entry[PATH_MAX];
    make_entry(f, entry, sizeof entry);
    long size = file_size(entry);
    assert_true(size > 100);

    damage(entry, size);
    tu_proc r;
    run_helper(f, &r, 3);
    assert_contains(r.err, "damaged");
    if (reason) assert_contains(r.err, reason);
    assert_contains(r.err, MISS);
    assert_not_contains(r.err, HIT);
    tu_proc_free(&r);
    /* Replaced (not necessarily the same size: PoCL adds the work-group
     * variants its own cache compiled meanwhile). */
    assert_true(file_size(entry) > 100);

    expect_trace(f, HIT, NULL, "damaged");
}

static void truncate_half(const char* path, long size) { assert_int_equal(truncate(path, size / 2), 0); }

static void flip_middle_byte(const char* path, long size)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, size / 2), 1);
    b ^= 0x10;
    assert_int_equal(pwrite(fd, &b, 1, size / 2), 1);
    close(fd);
}

static void test_clopen_cache_truncated_entry_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, truncate_half, NULL);
}

static void test_clopen_cache_flipped_byte_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, flip_middle_byte, "checksum mismatch");
}

static void truncate_to_zero(const char* path, long size)
{
    (void)size;
    assert_int_equal(truncate(path, 0), 0);
}

/* The header's key-text length says 4 GiB: more than the file holds. */
static void claim_huge_key_text(const char* path, long size)
{
    (void)size;
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b[4];
    put_le(b, 0xfffffff0u, 4);
    assert_int_equal(pwrite(fd, b, 4, 12), 4);
    close(fd);
}

/* The entry at path, of size bytes, read to be changed and then stored by
 * store_resummed. */
static unsigned char* load_entry(const char* path, long size)
{
    size_t n = 0;
    unsigned char* p = (unsigned char*)tu_read_file(path, &n);
    assert_non_null(p);
    assert_int_equal((long)n, size);
    return p;
}

/* Writes the n bytes of a changed entry to path under a valid checksum, and
 * frees them. */
static void store_resummed(const char* path, unsigned char* p, size_t n)
{
    char scratch[PATH_MAX + 8];
    snprintf(scratch, sizeof scratch, "%s.body", path);
    resum(p, n, scratch);
    write_bytes(path, p, n);
    free(p);
}

/* The first blob's size says 2^62 bytes, under a valid checksum. */
static void claim_huge_blob(const char* path, long size)
{
    unsigned char* p = load_entry(path, size);
    size_t at = 64 + (size_t)get_le32(p + 12) + get_le32(p + 16) + 4 * (size_t)get_le32(p + 20);
    assert_true(get_le32(p + 24) >= 1 && at + 8 < (size_t)size);
    put_le(p + at, 1ull << 62, 8);
    store_resummed(path, p, (size_t)size);
}

static void test_clopen_cache_empty_entry_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, truncate_to_zero, "truncated");
}

static void test_clopen_cache_header_longer_than_file_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, claim_huge_key_text, "truncated");
}

static void test_clopen_cache_huge_blob_size_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, claim_huge_blob, "bad blob size");
}

/* The entry says it is of a later format version (a library of another
 * version wrote it), under a valid checksum. */
static void claim_other_version(const char* path, long size)
{
    unsigned char* p = load_entry(path, size);
    put_le(p + 8, get_le32(p + 8) + 1, 4);
    store_resummed(path, p, (size_t)size);
}

/* An entry of another format version is a miss that rebuilds (and replaces
 * it), never an error. */
static void test_clopen_cache_other_format_version_rebuilt(void** state)
{
    check_damaged_entry_rebuilt(*state, claim_other_version, "other format version");
}

/* The entry's name is the SHA-256 of its key text, as sha256sum computes it:
 * the hash is the standard one (entries written by earlier versions of the
 * library, whose SHA-256 was its own code, keep their names and still hit). */
static void test_clopen_cache_key_is_standard_sha256(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry(f, entry, sizeof entry);
    tu_proc r;
    size_t n = 0;
    unsigned char* p = (unsigned char*)tu_read_file(entry, &n);
    assert_non_null(p);
    size_t klen = get_le32(p + 12);
    assert_true(64 + klen < n);
    char scratch[PATH_MAX + 8];
    snprintf(scratch, sizeof scratch, "%s/keytext", f->root);
    write_bytes(scratch, p + 64, klen);
    free(p);
    const char* args[] = {scratch, NULL};
    tu_spawn(&r, "/usr/bin/sha256sum", args, NULL, NULL, 30);
    assert_int_equal(r.status, 0);
    const char* name = strrchr(entry, '/') + 1;
    assert_int_equal(strncmp(r.out, name, 64), 0);
    tu_proc_free(&r);
}

static void test_clopen_cache_foreign_entry_rebuilt(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry(f, entry, sizeof entry);
    assert_int_equal(tu_write_file(entry, "not a cache entry, just some text\n"), 0);
    expect_trace(f, "damaged", MISS, NULL);
    expect_trace(f, HIT, NULL, NULL);
}

static void test_clopen_cache_readonly_folder_warns_once(void** state)
{
    fixture* f = *state;
    assert_int_equal(mkdir(f->cache, 0755), 0);
    assert_int_equal(chmod(f->cache, 0555), 0);
    /* Root writes through a mode of 0555: use a folder nobody can write. */
    char probe[PATH_MAX + 8];
    snprintf(probe, sizeof probe, "%s/probe", f->cache);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        snprintf(f->cache, sizeof f->cache, "/proc/self");
    }
    /* Two programs opened: still one warning. */
    tu_proc r;
    run_two_programs(f, &r);
    assert_int_equal(tu_count(r.err, "stdcl: warning:"), 1);
    assert_contains(r.err, "program cache off");
    assert_not_contains(r.err, HIT);
    assert_int_equal(tu_count(r.out, "result "), 2);
    tu_proc_free(&r);
}

static void test_clopen_cache_off_by_env(void** state)
{
    fixture* f = *state;
    const char* env[] = {"STDCL_CACHE=0", NULL};
    expect_trace_of(f, NULL, env, 3, 0, "stdcl[cache]: off", NULL, "stdcl: warning:");
    assert_int_equal(entries(f->cache, NULL, 0), 0);
}

static void test_clopen_cache_folder_from_xdg_cache_home(void** state)
{
    fixture* f = *state;
    char xdg[PATH_MAX + 16], xdg_env[PATH_MAX + 32], in_xdg[PATH_MAX + 32];
    snprintf(xdg, sizeof xdg, "%s/xdg", f->root);
    snprintf(xdg_env, sizeof xdg_env, "XDG_CACHE_HOME=%s", xdg);
    snprintf(in_xdg, sizeof in_xdg, "%s/stdcl", xdg);
    /* No STDCL_CACHE_DIR (test_env.sh sets one): XDG_CACHE_HOME/stdcl. */
    const char* envp[] = {"STDCL_TRACE=cache", xdg_env, "STDCL_CACHE_DIR", NULL};
    const char* args[] = {f->kfile, NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_cache"), args, envp, NULL, 120);
    tu_expect_status(&r, 0, "helper_cache");
    tu_proc_free(&r);
    assert_int_equal(entries(in_xdg, NULL, 0), 1);
    /* The folders the cache made are the user's only. */
    struct stat st;
    assert_int_equal(stat(xdg, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(stat(in_xdg, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
}

static void test_clopen_cache_concurrent_build_compiles_once(void** state)
{
    fixture* f = *state;
    char barrier[PATH_MAX + 16];
    snprintf(barrier, sizeof barrier, "%s/barrier", f->root);
    assert_int_equal(mkdir(barrier, 0755), 0);
    char e_h[PATH_MAX + 80], e_b[PATH_MAX + 32], e_d[PATH_MAX + 8], e_k[PATH_MAX + 32], e_c[PATH_MAX + 32];
    snprintf(e_h, sizeof e_h, "H=%s", tu_helper("helper_cache"));
    snprintf(e_b, sizeof e_b, "B=%s", barrier);
    snprintf(e_d, sizeof e_d, "D=%s", f->root);
    snprintf(e_k, sizeof e_k, "K=%s", f->kfile);
    snprintf(e_c, sizeof e_c, "STDCL_CACHE_DIR=%s", f->cache);
    const char* env[] = {e_h, e_b, e_d, e_k, e_c, "STDCL_TRACE=cache", NULL};
    const char* script = "\"$H\" -b \"$B\" \"$K\" > \"$D/out1\" 2> \"$D/err1\" & p1=$!\n"
                         "\"$H\" -b \"$B\" \"$K\" > \"$D/out2\" 2> \"$D/err2\" & p2=$!\n"
                         "wait $p1; s1=$?; wait $p2; s2=$?; exit $((s1 | s2))\n";
    const char* args[] = {"-c", script, NULL};
    tu_proc r;
    tu_spawn(&r, "/bin/sh", args, env, NULL, 180);
    char path[PATH_MAX + 16];
    char *out[2], *err[2];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/out%d", f->root, i + 1);
        out[i] = tu_read_file(path, NULL);
        snprintf(path, sizeof path, "%s/err%d", f->root, i + 1);
        err[i] = tu_read_file(path, NULL);
        assert_non_null(out[i]);
        assert_non_null(err[i]);
    }
    if (r.status != 0) print_message("err1:\n%s\nerr2:\n%s\n", err[0], err[1]);
    assert_int_equal(r.status, 0);
    /* One process compiled; the other waited for it and loaded its binary. */
    int misses = tu_count(err[0], MISS) + tu_count(err[1], MISS);
    int hits = tu_count(err[0], HIT) + tu_count(err[1], HIT);
    if (misses != 1 || hits != 1) print_message("err1:\n%s\nerr2:\n%s\n", err[0], err[1]);
    assert_int_equal(misses, 1);
    assert_int_equal(hits, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(result_of(out[i]), expected_sum(3, 0));
        free(out[i]);
        free(err[i]);
    }
    tu_proc_free(&r);
    assert_int_equal(entries(f->cache, NULL, 0), 1);
}

static void test_clopen_cache_lock_of_dead_process_ignored(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX], lock[PATH_MAX + 8];
    make_entry(f, entry, sizeof entry);
    tu_proc r;
    snprintf(lock, sizeof lock, "%.*s.lock", (int)(strlen(entry) - 6), entry);
    assert_int_equal(unlink(entry), 0);

    /* A process takes the key's lock and dies holding it: the kernel frees
     * the lock, the file stays behind. */
    char e_lock[PATH_MAX + 16];
    snprintf(e_lock, sizeof e_lock, "L=%s", lock);
    const char* env[] = {e_lock, NULL};
    const char* args[] = {"-c", "exec 9> \"$L\" && flock 9 && kill -9 $$", NULL};
    tu_spawn(&r, "/bin/sh", args, env, NULL, 30);
    assert_int_equal(r.status, 128 + SIGKILL);
    tu_proc_free(&r);
    assert_true(tu_is_file(lock));

    time_t t0 = time(NULL);
    expect_trace(f, MISS, NULL, "without its lock");
    assert_true(time(NULL) - t0 < 60);
    /* The builder removed the lock file when it was done. */
    assert_false(tu_is_file(lock));
    assert_int_equal(entries(f->cache, NULL, 0), 1);
}

static void test_clopen_cache_size_bound_evicts_oldest(void** state)
{
    fixture* f = *state;
    const char* a1[] = {"-o", "-D SALT=1", NULL};
    const char* a2[] = {"-o", "-D SALT=2", NULL};
    const char* a3[] = {"-o", "-D SALT=3", NULL};
    tu_proc r;
    run_helper_env(f, &r, a1, NULL, 3, 1);
    tu_proc_free(&r);
    char entry[PATH_MAX];
    assert_int_equal(entries(f->cache, entry, sizeof entry), 1);
    long size = file_size(entry);
    run_helper_env(f, &r, a2, NULL, 3, 2);
    tu_proc_free(&r);
    /* Using program 1 again makes program 2 the least recently used. */
    expect_trace_of(f, a1, NULL, 3, 1, HIT, NULL, NULL);

    /* Room for two entries and a half: storing the third evicts one. */
    char max_env[64];
    snprintf(max_env, sizeof max_env, "STDCL_CACHE_MAX=%ld", size * 5 / 2);
    const char* env[] = {max_env, NULL};
    expect_trace_of(f, a3, env, 3, 3, MISS, "evicted", NULL);
    assert_int_equal(entries(f->cache, NULL, 0), 2);

    expect_trace_of(f, a1, env, 3, 1, HIT, NULL, NULL);
    expect_trace_of(f, a3, env, 3, 3, HIT, NULL, NULL);
    expect_trace_of(f, a2, env, 3, 2, MISS, NULL, NULL); /* the evicted one */
}

/* make_entry, then the entry moved to root/elsewhere.clbin (its path in
 * elsewhere) and a symbolic link to it in its place. */
static void make_linked_entry(fixture* f, char* entry, size_t size, char* elsewhere, size_t esize)
{
    make_entry(f, entry, size);
    snprintf(elsewhere, esize, "%s/elsewhere.clbin", f->root);
    assert_int_equal(rename(entry, elsewhere), 0);
    assert_int_equal(symlink(elsewhere, entry), 0);
}

/* root/<name> holding "precious\n", outside the cache folder. */
static void make_outside(fixture* f, char* path, size_t size, const char* name)
{
    snprintf(path, size, "%s/%s", f->root, name);
    assert_int_equal(tu_write_file(path, "precious\n"), 0);
}

static void assert_still_precious(const char* path)
{
    char* text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_string_equal(text, "precious\n");
    free(text);
}

static void test_clopen_cache_stats_link_not_written_through(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX], stats[PATH_MAX + 8], outside[PATH_MAX + 16];
    make_entry(f, entry, sizeof entry);
    make_outside(f, outside, sizeof outside, "precious");
    snprintf(stats, sizeof stats, "%s/stats", f->cache);
    assert_int_equal(unlink(stats), 0);
    assert_int_equal(symlink(outside, stats), 0);

    expect_trace(f, HIT, "replaced stats: it was a symbolic link (not followed)", NULL);
    assert_still_precious(outside);
    assert_true(is_regular(stats));
    assert_int_equal(file_size(stats), 16);

    /* A hard link to a file outside: replaced too, not written in place. */
    assert_int_equal(unlink(stats), 0);
    assert_int_equal(link(outside, stats), 0);
    expect_trace(f, HIT, "replaced stats: it was a file with several links", NULL);
    assert_still_precious(outside);
    assert_int_equal(file_size(stats), 16);
}

static void test_clopen_cache_dangling_symlinks_create_nothing(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry(f, entry, sizeof entry);
    assert_int_equal(unlink(entry), 0);
    /* The key's lock, the eviction lock and the counters, each a link to a
     * file that does not exist outside the folder. */
    char in[3][PATH_MAX + 16], out[3][PATH_MAX + 16];
    sibling(in[0], sizeof in[0], entry, ".lock");
    snprintf(in[1], sizeof in[1], "%s/evict.lock", f->cache);
    snprintf(in[2], sizeof in[2], "%s/stats", f->cache);
    for (int i = 0; i < 3; i++) {
        snprintf(out[i], sizeof out[i], "%s/planted-%d", f->root, i);
        unlink(in[i]);
        assert_int_equal(symlink(out[i], in[i]), 0);
    }

    tu_proc r;
    run_helper(f, &r, 3);
    assert_contains(r.err, MISS);
    assert_not_contains(r.err, "without its lock");
    assert_int_equal(tu_count(r.err, ".lock: it was a symbolic link (not followed)"), 2);
    assert_contains(r.err, "replaced evict.lock: it was a symbolic link");
    assert_contains(r.err, "replaced stats: it was a symbolic link");
    tu_proc_free(&r);
    for (int i = 0; i < 3; i++) assert_false(exists(out[i]));
    assert_true(is_regular(entry));
    assert_false(exists(in[0])); /* the builder's lock, removed when done */
    assert_true(is_regular(in[1]));
    assert_true(is_regular(in[2]));
}

static void test_clopen_cache_symlinked_entry_not_loaded(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX], elsewhere[PATH_MAX + 16];
    /* A valid entry, but reached through a link: not loaded. */
    make_linked_entry(f, entry, sizeof entry, elsewhere, sizeof elsewhere);
    size_t n0 = 0;
    char* before = tu_read_file(elsewhere, &n0);
    assert_non_null(before);

    expect_trace(f, "damaged (a symbolic link", MISS, HIT);
    assert_true(is_regular(entry)); /* the link replaced by a new entry */
    size_t n1 = 0;
    char* after = tu_read_file(elsewhere, &n1);
    assert_non_null(after);
    assert_int_equal(n1, n0);
    assert_memory_equal(after, before, n0);
    free(before);
    free(after);

    expect_trace(f, HIT, NULL, NULL);
}

/* Runs helper_cache on k.cl and a copy k2.cl (two builds in one process)
 * and checks that both succeed, that the cache was off with exactly one
 * warning saying why, and that nothing was written in the folder. */
static void check_folder_refused(fixture* f, const char* why)
{
    tu_proc r;
    run_two_programs(f, &r);
    assert_int_equal(tu_count(r.out, "result "), 2);
    assert_int_equal(tu_count(r.err, "stdcl: warning:"), 1);
    assert_contains(r.err, "stdcl: warning: program cache off: ");
    assert_contains(r.err, f->cache);
    assert_contains(r.err, why);
    assert_not_contains(r.err, HIT);
    assert_not_contains(r.err, "stored");
    tu_proc_free(&r);
    assert_int_equal(count_names(f->cache), 0);
}

static void test_clopen_cache_folder_of_another_user_refused(void** state)
{
    fixture* f = *state;
    assert_int_equal(mkdir(f->cache, 0700), 0);
    assert_int_equal(chown(f->cache, 65534, 65534), 0);
    check_folder_refused(f, "is owned by uid 65534, not by this user");
}

static void test_clopen_cache_folder_writable_by_others_refused(void** state)
{
    fixture* f = *state;
    assert_int_equal(mkdir(f->cache, 0700), 0);
    assert_int_equal(chmod(f->cache, 0777), 0);
    check_folder_refused(f, "is writable by others (mode 0777)");
    assert_int_equal(chmod(f->cache, 0770), 0);
    check_folder_refused(f, "is writable by its group (mode 0770)");
}

/* The folder's own path is resolved once (links followed), then what was
 * opened is checked. */
static void test_clopen_cache_folder_symlink_resolved_then_checked(void** state)
{
    fixture* f = *state;
    char real[PATH_MAX + 16], foreign[PATH_MAX + 16], nowhere[PATH_MAX + 16];
    snprintf(real, sizeof real, "%s/real", f->root);
    snprintf(foreign, sizeof foreign, "%s/foreign", f->root);
    snprintf(nowhere, sizeof nowhere, "%s/nowhere", f->root);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(mkdir(foreign, 0700), 0);
    assert_int_equal(chown(foreign, 65534, 65534), 0);

    /* A link to a folder of the user's own: used. */
    snprintf(f->cache, sizeof f->cache, "%s/link-real", f->root);
    assert_int_equal(symlink(real, f->cache), 0);
    tu_proc r;
    expect_trace(f, MISS, NULL, "stdcl: warning:");
    assert_int_equal(entries(real, NULL, 0), 1);
    expect_trace(f, HIT, NULL, NULL);

    /* A link to another user's folder: refused. */
    snprintf(f->cache, sizeof f->cache, "%s/link-foreign", f->root);
    assert_int_equal(symlink(foreign, f->cache), 0);
    check_folder_refused(f, "is owned by uid 65534");

    /* A dangling link: refused, and nothing is made where it points. */
    snprintf(f->cache, sizeof f->cache, "%s/link-nowhere", f->root);
    assert_int_equal(symlink(nowhere, f->cache), 0);
    run_two_programs(f, &r);
    assert_int_equal(tu_count(r.err, "stdcl: warning:"), 1);
    assert_contains(r.err, "program cache off: cannot open");
    tu_proc_free(&r);
    assert_false(exists(nowhere));
}

static void test_clopen_cache_full_disk_builds_uncached(void** state)
{
    fixture* f = *state;
    assert_int_equal(mkdir(f->cache, 0700), 0);
    char second[PATH_MAX + 8];
    snprintf(second, sizeof second, "%s/k2.cl", f->src);
    assert_int_equal(tu_write_file(second, k_kernel), 0);
    /* In a mount namespace of its own, the cache folder is a 16 KiB tmpfs
     * (an entry is about 48 KiB), gone when the helper ends; the folder's
     * listing is taken before that. */
    char e_h[PATH_MAX + 80], e_k[PATH_MAX + 32], e_k2[PATH_MAX + 32], e_c[PATH_MAX + 32], e_d[PATH_MAX + 8],
        e_cd[PATH_MAX + 32];
    snprintf(e_h, sizeof e_h, "H=%s", tu_helper("helper_cache"));
    snprintf(e_k, sizeof e_k, "K=%s", f->kfile);
    snprintf(e_k2, sizeof e_k2, "K2=%s", second);
    snprintf(e_c, sizeof e_c, "C=%s", f->cache);
    snprintf(e_cd, sizeof e_cd, "STDCL_CACHE_DIR=%s", f->cache);
    snprintf(e_d, sizeof e_d, "D=%s", f->root);
    const char* env[] = {e_h, e_k, e_k2, e_c, e_cd, e_d, "STDCL_TRACE=cache", NULL};
    const char* script = "mount -t tmpfs -o size=16k,mode=0700 tmpfs \"$C\" || exit 77\n"
                         "\"$H\" \"$K\" \"$K2\" > \"$D/out\" 2> \"$D/err\"; s=$?\n"
                         "ls -a \"$C\" > \"$D/ls\"; exit $s\n";
    const char* args[] = {"-m", "/bin/sh", "-c", script, NULL};
    tu_proc r;
    tu_spawn(&r, "/usr/bin/unshare", args, env, NULL, 180);
    if (r.status == 77 || (r.status != 0 && strstr(r.err, "unshare"))) {
        print_message("no private tmpfs here (%s): skipped\n", r.err);
        tu_proc_free(&r);
        skip();
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/out", f->root);
    char* out = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/err", f->root);
    char* err = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/ls", f->root);
    char* ls = tu_read_file(path, NULL);
    assert_non_null(out);
    assert_non_null(err);
    assert_non_null(ls);
    if (r.status != 0) print_message("err:\n%s\n", err);
    assert_int_equal(r.status, 0);
    tu_proc_free(&r);
    /* Both builds succeeded, uncached, with one warning. */
    assert_int_equal(tu_count(out, "result "), 2);
    assert_int_equal(result_of(out), expected_sum(3, 0));
    assert_int_equal(tu_count(err, "stdcl: warning:"), 1);
    assert_contains(err, "program cache: cannot write");
    assert_contains(err, "No space left on device");
    assert_not_contains(err, HIT);
    /* No entry, and no temporary left behind. */
    assert_not_contains(ls, ".clbin");
    assert_not_contains(ls, ".tmp-");
    free(out);
    free(err);
    free(ls);
}

/* Runs build/bin/stdcl-cache with the fixture's folder. */
static void run_tool(fixture* f, tu_proc* r, const char* const* args)
{
    char tool[PATH_MAX + 32], cache_env[PATH_MAX + 32];
    snprintf(tool, sizeof tool, "%s/../bin/stdcl-cache", tu_bindir());
    snprintf(cache_env, sizeof cache_env, "STDCL_CACHE_DIR=%s", f->cache);
    const char* env[] = {cache_env, NULL};
    tu_spawn(r, tool, args, env, NULL, 60);
}

/* stdcl-cache args on the fixture's folder exits with status, its stdout
 * holding has and also (each NULL: not checked). */
static void expect_tool(fixture* f, const char* const* args, int status, const char* has, const char* also)
{
    tu_proc r;
    run_tool(f, &r, args);
    tu_expect_status(&r, status, "stdcl-cache");
    if (has) assert_contains(r.out, has);
    if (also) assert_contains(r.out, also);
    tu_proc_free(&r);
}

static void test_stdcl_cache_tool_list_stat_verify_clear(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry_and_hit(f, entry, sizeof entry);
    tu_proc r;
    const char* key = strrchr(entry, '/') + 1;
    char key16[17];
    snprintf(key16, sizeof key16, "%.16s", key);

    const char* list[] = {"list", NULL};
    run_tool(f, &r, list);
    tu_expect_status(&r, 0, "stdcl-cache list");
    assert_contains(r.out, key16);
    tu_proc_free(&r);

    const char* stat_args[] = {"stat", NULL};
    run_tool(f, &r, stat_args);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "entries: 1");
    assert_contains(r.out, "hits: 1");
    assert_contains(r.out, "misses: 1");
    tu_proc_free(&r);

    const char* verify[] = {"verify", NULL};
    expect_tool(f, verify, 0, "1 good, 0 damaged", NULL);

    flip_middle_byte(entry, file_size(entry));
    expect_tool(f, verify, 1, "checksum", "0 good, 1 damaged");

    const char* clear[] = {"clear", NULL};
    expect_tool(f, clear, 0, NULL, NULL);
    assert_int_equal(entries(f->cache, NULL, 0), 0);
    run_tool(f, &r, stat_args);
    assert_contains(r.out, "entries: 0");
    assert_contains(r.out, "hits: 0");
    tu_proc_free(&r);
}

/* ------------------------------------------------------------------------ */
/* The cache API (stdcl_cache.h), in this process                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    int n, good, bad, removed, regular;
    unsigned ndevices;
    char key[65];
    char origin[PATH_MAX];
    char problem[256];
} seen_entries;

static int note_entry(const stdcl_cache_entry* e, void* arg)
{
    seen_entries* s = arg;
    s->n++;
    s->regular += e->regular;
    s->removed += e->removed;
    if (e->problem) {
        s->bad++;
        snprintf(s->problem, sizeof s->problem, "%s", e->problem);
    } else {
        s->good++;
    }
    s->ndevices = e->ndevices;
    snprintf(s->key, sizeof s->key, "%s", e->key);
    snprintf(s->origin, sizeof s->origin, "%s", e->origin);
    return 0;
}

static int stop_at_first(const stdcl_cache_entry* e, void* arg)
{
    (void)e;
    (void)arg;
    return 7;
}

/* After one build: list, stat, verify (good, damaged, removed) and clear
 * see what the files are. */
static void test_stdcl_cache_list_stat_verify_clear_in_process(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry_and_hit(f, entry, sizeof entry);
    tu_proc r;

    stdcl_cache* c = stdcl_cache_open(f->cache);
    assert_non_null(c);
    seen_entries s = {0};
    assert_int_equal(stdcl_cache_list(c, note_entry, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.good, 1);
    assert_int_equal(s.regular, 1);
    assert_int_equal(s.ndevices, 2); /* the test environment's two PoCL devices */
    assert_int_equal(strncmp(s.key, strrchr(entry, '/') + 1, 64), 0);
    assert_contains(s.origin, "k.cl");
    assert_int_equal(stdcl_cache_list(c, stop_at_first, NULL), 7);

    stdcl_cache_info info;
    assert_int_equal(stdcl_cache_stat(c, &info), 0);
    assert_string_equal(info.dir, f->cache);
    assert_int_equal(info.entries, 1);
    assert_int_equal(info.bytes, file_size(entry));
    assert_int_equal(info.hits, 1);
    assert_int_equal(info.misses, 1);

    memset(&s, 0, sizeof s);
    assert_int_equal(stdcl_cache_verify(c, 0, note_entry, &s), 0);
    assert_int_equal(s.good, 1);
    flip_middle_byte(entry, file_size(entry));
    memset(&s, 0, sizeof s);
    assert_int_equal(stdcl_cache_verify(c, 0, note_entry, &s), 1);
    assert_int_equal(s.bad, 1);
    assert_contains(s.problem, "checksum mismatch");
    assert_int_equal(s.removed, 0);
    assert_true(exists(entry));
    memset(&s, 0, sizeof s);
    assert_int_equal(stdcl_cache_verify(c, 1, note_entry, &s), 0);
    assert_int_equal(s.removed, 1);
    assert_false(exists(entry));

    run_helper(f, &r, 3);
    tu_proc_free(&r);
    assert_int_equal(stdcl_cache_clear(c), 1);
    assert_int_equal(entries(f->cache, NULL, 0), 0);
    assert_int_equal(stdcl_cache_stat(c, &info), 0);
    assert_int_equal(info.entries, 0);
    assert_int_equal(info.hits + info.misses, 0);
    assert_null(stdcl_cache_note(c));
    stdcl_cache_close(c);
}

/* A folder that does not exist is an empty cache, left uncreated; clear
 * says it does not exist. */
static void test_stdcl_cache_open_missing_folder_is_empty(void** state)
{
    fixture* f = *state;
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/none", f->root);
    stdcl_cache* c = stdcl_cache_open(dir);
    assert_non_null(c);
    seen_entries s = {0};
    assert_int_equal(stdcl_cache_list(c, note_entry, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(stdcl_cache_verify(c, 1, note_entry, &s), 0);
    stdcl_cache_info info;
    assert_int_equal(stdcl_cache_stat(c, &info), 0);
    assert_int_equal(info.entries, 0);
    assert_int_equal(stdcl_cache_clear(c), STDCL_ENOENT);
    assert_contains(clerror(), "does not exist");
    assert_false(exists(dir));
    stdcl_cache_close(c);
}

/* A folder others can write is refused, as the library refuses it. */
static void test_stdcl_cache_open_refuses_folder_writable_by_others(void** state)
{
    fixture* f = *state;
    assert_int_equal(mkdir(f->cache, 0700), 0);
    assert_int_equal(chmod(f->cache, 0777), 0);
    assert_null(stdcl_cache_open(f->cache));
    const char* msg = clerror();
    assert_contains(msg, "stdcl_cache_open: ");
    assert_contains(msg, "not used as a cache folder");
}

/* NULL handles, callbacks and results, and an empty name, are refused. */
static void test_stdcl_cache_calls_reject_bad_arguments(void** state)
{
    fixture* f = *state;
    stdcl_cache_info info;
    assert_int_equal(stdcl_cache_list(NULL, note_entry, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_list: the cache handle is NULL");
    assert_int_equal(stdcl_cache_stat(NULL, &info), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_stat: the cache handle is NULL");
    assert_int_equal(stdcl_cache_verify(NULL, 0, NULL, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_verify: the cache handle is NULL");
    assert_int_equal(stdcl_cache_clear(NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_clear: the cache handle is NULL");
    assert_null(stdcl_cache_note(NULL));
    assert_contains(clerror(), "stdcl_cache_note: the cache handle is NULL");
    assert_null(stdcl_cache_open(""));
    assert_contains(clerror(), "stdcl_cache_open: the folder name is empty");
    stdcl_cache_close(NULL);

    stdcl_cache* c = stdcl_cache_open(f->cache);
    assert_non_null(c);
    assert_int_equal(stdcl_cache_list(c, NULL, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_list: the callback is NULL");
    assert_int_equal(stdcl_cache_stat(c, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_cache_stat: info is NULL");
    stdcl_cache_close(c);
}

/* The folder in use: STDCL_CACHE_DIR, else $XDG_CACHE_HOME/stdcl, else
 * ~/.cache/stdcl; a malformed STDCL_CACHE_MAX is a note, not an error. */
static void test_stdcl_cache_dir_follows_environment(void** state)
{
    fixture* f = *state;
    char* old_dir = getenv("STDCL_CACHE_DIR") ? strdup(getenv("STDCL_CACHE_DIR")) : NULL;
    char* old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    setenv("STDCL_CACHE_DIR", "/somewhere/cache/", 1);
    assert_string_equal(stdcl_cache_dir(), "/somewhere/cache");
    unsetenv("STDCL_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    assert_string_equal(stdcl_cache_dir(), "/xdg/stdcl");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    assert_string_equal(stdcl_cache_dir(), "/home/someone/.cache/stdcl");

    setenv("STDCL_CACHE_DIR", f->cache, 1);
    setenv("STDCL_CACHE_MAX", "lots", 1);
    stdcl_cache* c = stdcl_cache_open(NULL);
    unsetenv("STDCL_CACHE_MAX");
    assert_non_null(c);
    const char* note = stdcl_cache_note(c);
    assert_non_null(note);
    assert_contains(note, "STDCL_CACHE_MAX='lots'");
    assert_null(stdcl_cache_note(c));
    stdcl_cache_info info;
    assert_int_equal(stdcl_cache_stat(c, &info), 0);
    assert_string_equal(info.dir, f->cache);
    stdcl_cache_close(c);

    if (old_dir)
        setenv("STDCL_CACHE_DIR", old_dir, 1);
    else
        unsetenv("STDCL_CACHE_DIR");
    if (old_xdg) setenv("XDG_CACHE_HOME", old_xdg, 1);
    free(old_dir);
    free(old_xdg);
}

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* The np paths sorted, one per line, into out; frees them. */
static void join_sorted(char** paths, int np, char* out, size_t size)
{
    qsort(paths, np, sizeof *paths, cmp_str);
    out[0] = '\0';
    for (int i = 0; i < np; i++) {
        strncat(out, paths[i], size - strlen(out) - 2);
        strcat(out, "\n");
        free(paths[i]);
    }
}

/* The realpaths of the "include" lines of the only entry's key text (the
 * files the cache followed), sorted, one per line. */
static void cached_includes(fixture* f, char* out, size_t size)
{
    char entry[PATH_MAX];
    assert_int_equal(entries(f->cache, entry, sizeof entry), 1);
    size_t n = 0;
    char* p = tu_read_file(entry, &n);
    assert_non_null(p);
    size_t klen = get_le32((unsigned char*)p + 12);
    char* text = strndup(p + 64, klen);
    free(p);
    char* paths[32];
    int np = 0;
    for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "include ", 8) != 0) continue;
        char* last = strrchr(line, ' ');
        if (strcmp(last + 1, "missing") == 0) continue;
        *last = '\0';
        char* path = strrchr(line, ' ') + 1;
        char real[PATH_MAX];
        assert_non_null(realpath(path, real));
        assert_true(np < 32);
        paths[np++] = strdup(real);
    }
    free(text);
    join_sorted(paths, np, out, size);
}

/* The realpaths of the headers clcc's depfile names, sorted, one per line. */
static void clcc_includes(const char* depfile, const char* kfile, char* out, size_t size)
{
    char* d = tu_read_file(depfile, NULL);
    assert_non_null(d);
    char* nl = strchr(d, '\n');
    if (nl) *nl = '\0';
    char* paths[32];
    int np = 0;
    char kreal[PATH_MAX];
    assert_non_null(realpath(kfile, kreal));
    for (char* w = strtok(strchr(d, ':') + 1, " "); w; w = strtok(NULL, " ")) {
        char real[PATH_MAX];
        assert_non_null(realpath(w, real));
        if (strcmp(real, kreal) == 0) continue;
        assert_true(np < 32);
        paths[np++] = strdup(real);
    }
    free(d);
    join_sorted(paths, np, out, size);
}

/* clcc and the cache read a kernel's #includes with one scanner: directives
 * in comments and strings are not includes, one after a comment is, angled
 * and quoted names (holding the other delimiter) resolve alike, nested
 * includes are relative to their own file; so the headers clcc inlines are
 * the headers the cache key holds. */
static void test_clopen_cache_and_clcc_agree_on_includes(void** state)
{
    fixture* f = *state;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/inc", f->src);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/inc/nested.h", f->src);
    assert_int_equal(tu_write_file(path, "#include \"../deep.h\"\n#define NESTED DEEP\n"), 0);
    snprintf(path, sizeof path, "%s/deep.h", f->src);
    assert_int_equal(tu_write_file(path, "#define DEEP 0\n"), 0);
    snprintf(path, sizeof path, "%s/extra.h", f->src);
    assert_int_equal(tu_write_file(path, "#define EXTRA 0\n"), 0);
    snprintf(path, sizeof path, "%s/q>r.h", f->src);
    assert_int_equal(tu_write_file(path, "#define QR 0\n"), 0);
    const char* kernel = "/* #include \"nothere1.h\" */\n"
                         "// #include \"nothere2.h\"\n"
                         "/* a comment over\n"
                         "   lines #include \"nothere3.h\"\n"
                         "*/ #include \"val.h\"\n"
                         "  #  include <extra.h>\n"
                         "#include \"inc/nested.h\" // \"nothere4.h\"\n"
                         "#include \"q>r.h\"\n"
                         "#define STR \"#include \\\"nothere5.h\\\"\"\n"
                         "__kernel void k(__global int* out)\n"
                         "{\n"
                         "    int i = get_global_id(0);\n"
                         "    out[i] = i * VAL + SALT + EXTRA + NESTED + QR;\n"
                         "}\n";
    assert_int_equal(tu_write_file(f->kfile, kernel), 0);
    tu_proc r;
    run_helper(f, &r, 3);
    tu_proc_free(&r);
    char from_cache[4096];
    cached_includes(f, from_cache, sizeof from_cache);

    char clcc[PATH_MAX + 32], out_c[PATH_MAX + 32], dep[PATH_MAX + 32];
    snprintf(clcc, sizeof clcc, "%s/../bin/clcc", tu_bindir());
    snprintf(out_c, sizeof out_c, "%s/k.c", f->root);
    snprintf(dep, sizeof dep, "%s/k.d", f->root);
    const char* args[] = {"-S", "-MD", "-MF", dep, "-o", out_c, f->kfile, NULL};
    tu_spawn(&r, clcc, args, NULL, NULL, 60);
    tu_expect_status(&r, 0, "clcc");
    assert_not_contains(r.err, "cannot find");
    tu_proc_free(&r);
    char from_clcc[4096];
    clcc_includes(dep, f->kfile, from_clcc, sizeof from_clcc);

    assert_string_equal(from_cache, from_clcc);
    /* val.h, extra.h, inc/nested.h, deep.h, q>r.h; none of the nothere*.h. */
    assert_int_equal(tu_count(from_cache, "\n"), 5);
    assert_contains(from_cache, "/q>r.h\n");
    assert_contains(from_cache, "/deep.h\n");
    assert_not_contains(from_cache, "nothere");
}

static void test_clopen_cache_entry_that_is_a_folder_rebuilt(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry_replaced(f, entry, sizeof entry, mkdir, 0700);

    tu_proc r;
    run_helper(f, &r, 3);
    assert_contains(r.err, "damaged (a folder");
    assert_contains(r.err, MISS);
    /* It cannot be replaced: one warning, and the folder is left alone. */
    assert_int_equal(tu_count(r.err, "stdcl: warning:"), 1);
    assert_contains(r.err, "program cache: cannot write");
    assert_contains(r.err, "Is a directory");
    tu_proc_free(&r);
    assert_true(tu_is_dir(entry));

    const char* verify[] = {"verify", NULL};
    expect_tool(f, verify, 1, "damaged: a folder", NULL);
}

static void test_clopen_cache_entry_that_is_a_fifo_rebuilt(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry_replaced(f, entry, sizeof entry, mkfifo, 0600);

    /* Nobody writes to the FIFO: opening it must not block. */
    const char* verify[] = {"verify", NULL};
    expect_tool(f, verify, 1, "damaged: a FIFO", NULL);
    const char* list[] = {"list", NULL};
    expect_tool(f, list, 0, "a FIFO, not a cache entry", NULL);

    expect_trace(f, "damaged (a FIFO", MISS, "stdcl: warning:");
    assert_true(is_regular(entry)); /* replaced */
    expect_trace(f, HIT, NULL, NULL);
}

static void test_stdcl_cache_clear_removes_only_regular_files(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX], outside[PATH_MAX + 16];
    make_entry(f, entry, sizeof entry);
    make_outside(f, outside, sizeof outside, "precious");
    /* Links with the names of cache files, all to one file outside. */
    char links[4][PATH_MAX + 80];
    snprintf(links[0], sizeof links[0], "%s/stats", f->cache);
    snprintf(links[1], sizeof links[1], "%s/%064d.clbin", f->cache, 0);
    snprintf(links[2], sizeof links[2], "%s/%064d.lock", f->cache, 1);
    snprintf(links[3], sizeof links[3], "%s/.tmp-planted", f->cache);
    for (int i = 0; i < 4; i++) {
        unlink(links[i]);
        assert_int_equal(symlink(outside, links[i]), 0);
    }

    tu_proc r;
    const char* clear[] = {"clear", NULL};
    run_tool(f, &r, clear);
    tu_expect_status(&r, 0, "stdcl-cache clear");
    assert_contains(r.out, "removed 1 entry");
    assert_int_equal(tu_count(r.err, ": a symbolic link, not a cache file"), 4);
    assert_contains(r.err, "left stats: a symbolic link");
    tu_proc_free(&r);
    assert_false(exists(entry));
    for (int i = 0; i < 4; i++) assert_true(is_link(links[i]));
    assert_still_precious(outside);
}

static void test_stdcl_cache_verify_removes_a_link_not_its_target(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX], elsewhere[PATH_MAX + 16];
    make_linked_entry(f, entry, sizeof entry, elsewhere, sizeof elsewhere);
    long size = file_size(elsewhere);

    const char* verify[] = {"verify", NULL};
    expect_tool(f, verify, 1, "damaged: a symbolic link", "0 good, 1 damaged");
    const char* remove_args[] = {"verify", "--remove", NULL};
    expect_tool(f, remove_args, 0, "(removed)", NULL);
    assert_false(exists(entry));
    assert_true(is_regular(elsewhere));
    assert_int_equal(file_size(elsewhere), size);
}

static void test_stdcl_cache_refuses_folder_not_the_users_own(void** state)
{
    fixture* f = *state;
    char entry[PATH_MAX];
    make_entry(f, entry, sizeof entry);
    const char* list[] = {"list", NULL};
    const char* clear[] = {"clear", NULL};
    tu_proc r;

    assert_int_equal(chown(f->cache, 65534, 65534), 0);
    run_tool(f, &r, list);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "is owned by uid 65534");
    assert_contains(r.err, "not used as a cache folder");
    tu_proc_free(&r);
    expect_tool(f, clear, 2, NULL, NULL);
    assert_int_equal(entries(f->cache, NULL, 0), 1);

    assert_int_equal(chown(f->cache, getuid(), getgid()), 0);
    assert_int_equal(chmod(f->cache, 0777), 0);
    run_tool(f, &r, clear);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "is writable by others (mode 0777)");
    tu_proc_free(&r);
    assert_int_equal(entries(f->cache, NULL, 0), 1);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_clopen_cache_hit_in_second_process, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clsopen_cache_hit_in_second_process, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_header_edit_rebuilds, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_header_edit_rebuilds_for_every_spelling, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_option_change_named_in_trace, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_opt_options_are_part_of_the_cache_key, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clsopen_opt_options_are_part_of_the_cache_key, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_truncated_entry_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_and_clcc_agree_on_includes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_list_stat_verify_clear_in_process, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_open_missing_folder_is_empty, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_open_refuses_folder_writable_by_others, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_calls_reject_bad_arguments, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_dir_follows_environment, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_other_format_version_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_key_is_standard_sha256, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_flipped_byte_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_foreign_entry_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_readonly_folder_warns_once, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_off_by_env, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_folder_from_xdg_cache_home, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_concurrent_build_compiles_once, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_lock_of_dead_process_ignored, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_size_bound_evicts_oldest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_tool_list_stat_verify_clear, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_empty_entry_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_header_longer_than_file_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_huge_blob_size_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_stats_link_not_written_through, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_dangling_symlinks_create_nothing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_symlinked_entry_not_loaded, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_folder_of_another_user_refused, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_folder_writable_by_others_refused, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_folder_symlink_resolved_then_checked, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_full_disk_builds_uncached, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_entry_that_is_a_folder_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clopen_cache_entry_that_is_a_fifo_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_clear_removes_only_regular_files, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_verify_removes_a_link_not_its_target, setup, teardown),
    cmocka_unit_test_setup_teardown(test_stdcl_cache_refuses_folder_not_the_users_own, setup, teardown),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "cache", tests, NULL, NULL); }
