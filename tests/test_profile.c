/* SPDX-License-Identifier: MIT */
/* test_profile.c: the profile at exit (STDCL_PROFILE=1 or =path,
 * STDCL_PROFILE_FORMAT=json).  Each test runs helper_profile's "report"
 * workload, whose commands are known exactly (see helper_profile.c), in a
 * fresh process, and reads its report: launch counts and bytes must match
 * exactly, times must be plausible (every command timed, each mean at most
 * the process's wall time, max >= mean). */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

/* Runs helper_profile's workload `mode` with env (NULL-terminated
 * "NAME=value" list) and an empty program cache of its own (in $TMPDIR, which
 * tools/test_env.sh makes fresh and removes), so that its first build is a
 * cache miss; it must print "<mode> ok". */
static void run_workload(tu_proc* r, const char* mode, const char* const* env)
{
    const char* args[] = {mode, NULL};
    char* cache = tu_mkdtemp();
    assert_non_null(cache);
    char var[PATH_MAX + 32];
    snprintf(var, sizeof var, "STDCL_CACHE_DIR=%s", cache);
    const char* all[16];
    size_t n = 0;
    while (env[n] && n < 14) {
        all[n] = env[n];
        n++;
    }
    all[n++] = var;
    all[n] = NULL;
    tu_spawn(r, tu_helper("helper_profile"), args, all, NULL, 180);
    free(cache);
    char ok[64];
    snprintf(ok, sizeof ok, "%s ok", mode);
    if (r->status != 0 || !strstr(r->out, ok)) tu_proc_dump(r, mode);
    assert_int_equal(r->status, 0);
    assert_contains(r->out, ok);
}

static void run_report(tu_proc* r, const char* const* env) { run_workload(r, "report", env); }

/* Occurrence n (0: the first) of head in text, or NULL. */
static const char* nth_match(const char* text, const char* head, int n)
{
    const char* p = text;
    for (int i = 0; p && i <= n; i++) {
        p = strstr(p, head);
        if (p && i < n) p += strlen(head);
    }
    return p;
}

/* A copy of the text from p up to end (NULL: all of it); the caller frees it. */
static char* copy_to(const char* p, const char* end)
{
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char* s = (char*)malloc(len + 1);
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* The text of context block n (0: the first) labelled label in a table
 * report, up to the next blank line; the caller frees it. */
static char* context_block(const char* report, const char* label, int n)
{
    char head[128];
    snprintf(head, sizeof head, "\n%s: platform '", label);
    const char* p = nth_match(report, head, n);
    if (!p) return NULL;
    p += 1;
    const char* end = strstr(p, "\n\n");
    return copy_to(p, end ? end + 1 : NULL);
}

/* The text of "  device N:" in a context block, up to the next device. */
static const char* device_part(const char* block, int dev, char* out, size_t cap)
{
    char head[32], next[32];
    snprintf(head, sizeof head, "  device %d:", dev);
    snprintf(next, sizeof next, "  device %d:", dev + 1);
    const char* p = strstr(block, head);
    if (!p) return NULL;
    const char* end = strstr(p, next);
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len >= cap) len = cap - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

/* The numbers after the row named name ("    name  1  2 ..."); how many were read. */
static int row_values(const char* part, const char* name, double* v, int n)
{
    char key[96];
    snprintf(key, sizeof key, "\n    %s  ", name);
    const char* p = strstr(part, key);
    if (!p) return 0;
    p += strlen(key);
    int got = 0;
    while (got < n) {
        char* end;
        double x = strtod(p, &end);
        if (end == p) break;
        v[got++] = x;
        p = end;
    }
    return got;
}

/* The seconds in "stdcl profile: process N, S s from library load to exit". */
static double report_seconds(const char* report)
{
    const char* p = strstr(report, "stdcl profile: process ");
    assert_non_null(p);
    const char* c = strchr(p, ',');
    assert_non_null(c);
    return strtod(c + 1, NULL);
}

/* A kernel row: launches exactly, every one timed with a plausible mean. */
static void check_kernel(const char* part, const char* name, double launches, double wall_s)
{
    double v[4];
    assert_int_equal(row_values(part, name, v, 4), 4); /* launches, total ms, mean us, max us */
    assert_true(v[0] == launches);
    assert_true(v[1] > 0 && v[1] <= wall_s * 1e3);
    /* mean x launches = total, within the rounding of total (0.5 us) and mean (0.005 us) */
    assert_true(v[2] > 0 && v[2] * launches <= v[1] * 1e3 + 0.5 + 0.005 * launches);
    assert_true(v[2] * launches >= v[1] * 1e3 - 0.5 - 0.005 * launches);
    assert_true(v[3] >= v[2] * 0.99);
}

/* A transfer row: count and bytes exactly; a positive time. */
static void check_transfer(const char* part, const char* name, double count, double bytes)
{
    double v[3];
    assert_int_equal(row_values(part, name, v, 3), 3); /* count, bytes, total ms (then GB/s or "no copy") */
    assert_true(v[0] == count);
    assert_true(v[1] == bytes);
    assert_true(v[2] >= 0);
}

static void test_table_has_exact_counts_in_copy_mode(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCL_PROFILE=1", "STDCL_ZERO_COPY=0", "STDCL_PROFILE_FORMAT", NULL};
    run_report(&r, env);
    double wall = report_seconds(r.err);
    assert_true(wall > 0);
    char* cpu = context_block(r.err, "stdcpu", 0);
    if (!cpu) tu_proc_dump(&r, "no stdcpu block");
    assert_non_null(cpu);
    assert_contains(cpu, "builds: 2 compiled in "); /* the kernels', clreduce's */
    assert_contains(cpu, "(2 program cache miss(es)); 0 from the program cache (hits)");
    assert_contains(cpu, "1 clopen of a program already open");
    char part[4096];
    assert_non_null(device_part(cpu, 0, part, sizeof part));
    check_kernel(part, "twice", 5, wall);
    check_transfer(part, "clmsync to device", 2, 8192);
    check_transfer(part, "clmsync to host", 2, 8192);
    check_transfer(part, "clmcopy on device", 1, 4096);
    check_kernel(part, "clreduce: stdcl_reduce_chunked (stdcl_reduce_int_sum.cl)", 1, wall);
    assert_null(strstr(part, "zero-copy"));
    assert_null(strstr(part, "not timed"));
    assert_non_null(device_part(cpu, 1, part, sizeof part));
    check_kernel(part, "twice", 4, wall); /* never waited for: timed at exit */
    check_transfer(part, "clmsync to device", 1, 4096);
    assert_null(strstr(part, "clmsync to host"));
    assert_null(strstr(part, "not timed"));
    free(cpu);
    /* The destroyed user context, then the one still alive at exit. */
    char* u1 = context_block(r.err, "user context", 0);
    char* u2 = context_block(r.err, "user context", 1);
    assert_non_null(u1);
    assert_non_null(u2);
    assert_contains(u1, "builds: 0 compiled in 0.0 ms; 1 from the program cache (hits)");
    assert_non_null(device_part(u1, 0, part, sizeof part));
    check_kernel(part, "twice", 2, wall);
    assert_non_null(device_part(u2, 0, part, sizeof part));
    check_kernel(part, "twice", 3, wall);
    assert_contains(u2, "  device 1: ");
    assert_contains(u2, ": no commands");
    free(u1);
    free(u2);
    assert_contains(r.err, "nothing run in: stddev");
    tu_proc_free(&r);
}

/* The kernel rows of device 0 of stdcpu after helper_profile's prims
 * workload (clsort, clscan, clreduce of 4096 ints) with env: each of rows[]
 * ("name", launches), and no other. */
struct prim_row {
    const char* name;
    double launches;
};
static void check_prims_rows(const char* const* env, const struct prim_row* rows, int nrows)
{
    tu_proc r;
    run_workload(&r, "prims", env);
    double wall = report_seconds(r.err);
    char* cpu = context_block(r.err, "stdcpu", 0);
    if (!cpu) tu_proc_dump(&r, "no stdcpu block");
    assert_non_null(cpu);
    char part[8192];
    assert_non_null(device_part(cpu, 0, part, sizeof part));
    for (int i = 0; i < nrows; i++) {
        if (!strstr(part, rows[i].name)) tu_proc_dump(&r, rows[i].name);
        check_kernel(part, rows[i].name, rows[i].launches, wall);
    }
    /* Every kernel row is one of them: the lines between the two headers. */
    const char* k = strstr(part, "    kernel ");
    const char* t = strstr(part, "    transfer ");
    assert_non_null(k);
    assert_non_null(t);
    int lines = 0;
    for (const char* p = k; p < t; p++) lines += *p == '\n';
    assert_int_equal(lines - 1, nrows);
    free(cpu);
    tu_proc_free(&r);
}

/* Under STDCL_PROFILE each kernel a primitive launches has its own row:
 * "call: kernel (program)", every launch timed.  (The call's last kernel
 * alone used to stand for the whole call.) */
static void test_primitives_kernels_each_have_a_row(void** state)
{
    (void)state;
    const char* cpu_env[] = {"STDCL_PROFILE=1", "STDCL_ZERO_COPY=0", "STDCL_PROFILE_FORMAT", "STDCL_PRIMS_LAYOUT=cpu",
                             "STDCL_REDUCE_LAYOUT=chunked", NULL};
    const struct prim_row cpu_rows[] = {
        {"clsort: stdcl_sort_count (stdcl_sort_32_cpu.cl)", 4},
        {"clsort: stdcl_scan_reduce (stdcl_sort_32_cpu.cl)", 4},
        {"clsort: stdcl_scan_parts (stdcl_sort_32_cpu.cl)", 4},
        {"clsort: stdcl_scan_tiles (stdcl_sort_32_cpu.cl)", 4},
        {"clsort: stdcl_sort_scatter (stdcl_sort_32_cpu.cl)", 4},
        {"clscan: stdcl_scan_reduce (stdcl_scan_int_sum_cpu.cl)", 1},
        {"clscan: stdcl_scan_parts (stdcl_scan_int_sum_cpu.cl)", 1},
        {"clscan: stdcl_scan_tiles (stdcl_scan_int_sum_cpu.cl)", 1},
        {"clreduce: stdcl_reduce_chunked (stdcl_reduce_int_sum.cl)", 1},
    };
    check_prims_rows(cpu_env, cpu_rows, (int)(sizeof cpu_rows / sizeof cpu_rows[0]));
    /* The GPU layout (on PoCL's CPU device, as the tests force it). */
    const char* gpu_env[] = {"STDCL_PROFILE=1", "STDCL_ZERO_COPY", "STDCL_PROFILE_FORMAT", "STDCL_PRIMS_LAYOUT=gpu",
                             "STDCL_REDUCE_LAYOUT=strided", NULL};
    const struct prim_row gpu_rows[] = {
        {"clsort: stdcl_sort_hist (stdcl_sort_32_gpu.cl)", 1},
        {"clsort: stdcl_sort_onesweep (stdcl_sort_32_gpu.cl)", 4},
        {"clscan: stdcl_scan_onepass (stdcl_scan_int_sum_gpu.cl)", 1},
        {"clreduce: stdcl_reduce_strided (stdcl_reduce_int_sum.cl)", 1},
    };
    check_prims_rows(gpu_env, gpu_rows, (int)(sizeof gpu_rows / sizeof gpu_rows[0]));
    /* The timeline (STDCL_TIMELINE) has each of those kernels, named so. */
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char path[PATH_MAX + 32], var[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/t.json", dir);
    snprintf(var, sizeof var, "STDCL_TIMELINE=%s", path);
    const char* tl_env[] = {var, "STDCL_PROFILE", "STDCL_PRIMS_LAYOUT=gpu", "STDCL_REDUCE_LAYOUT=strided", NULL};
    tu_proc r;
    run_workload(&r, "prims", tl_env);
    char* json = tu_read_file(path, NULL);
    if (!json) tu_proc_dump(&r, "no timeline");
    assert_non_null(json);
    for (size_t i = 0; i < sizeof gpu_rows / sizeof gpu_rows[0]; i++) {
        char quoted[256];
        snprintf(quoted, sizeof quoted, "\"%s\"", gpu_rows[i].name);
        int n = 0;
        for (const char* p = strstr(json, quoted); p; p = strstr(p + 1, quoted)) n++;
        assert_int_equal(n, (int)gpu_rows[i].launches);
    }
    free(json);
    unlink(path);
    rmdir(dir);
    free(dir);
    tu_proc_free(&r);
}

static void test_table_counts_zero_copy_syncs_apart(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCL_PROFILE=1", "STDCL_ZERO_COPY", "STDCL_PROFILE_FORMAT", NULL};
    run_report(&r, env);
    char* cpu = context_block(r.err, "stdcpu", 0);
    assert_non_null(cpu);
    char part[4096];
    assert_non_null(device_part(cpu, 0, part, sizeof part));
    if (strstr(part, "clmsync to device")) { /* the probe found no zero-copy here */
        free(cpu);
        tu_proc_free(&r);
        skip();
    }
    check_transfer(part, "clmsync, zero-copy", 4, 16384);
    assert_contains(part, "no copy");
    check_transfer(part, "clmcopy on device", 1, 4096);
    free(cpu);
    tu_proc_free(&r);
}

/* ---- a small JSON checker: the whole text must be one value ---------- */

static const char* js_ws(const char* p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char* js_value(const char* p, int depth);

static const char* js_string(const char* p)
{
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char* js_number(const char* p)
{
    const char* s = p;
    if (*p == '-') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    while (isdigit((unsigned char)*p)) p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    return p > s ? p : NULL;
}

static const char* js_list(const char* p, char close, int is_object, int depth)
{
    p = js_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (is_object) {
            p = js_string(p);
            if (!p) return NULL;
            p = js_ws(p);
            if (*p != ':') return NULL;
            p = js_ws(p + 1);
        }
        p = js_value(p, depth + 1);
        if (!p) return NULL;
        p = js_ws(p);
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p = js_ws(p + 1);
    }
}

static const char* js_value(const char* p, int depth)
{
    if (depth > 32) return NULL;
    p = js_ws(p);
    if (*p == '{') return js_list(p, '}', 1, depth);
    if (*p == '[') return js_list(p, ']', 0, depth);
    if (*p == '"') return js_string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return js_number(p);
}

static int json_valid(const char* text)
{
    const char* end = js_value(text, 0);
    return end && *js_ws(end) == '\0';
}

/* helper_profile noforce[_nomark] with STDCL_PROFILE=1 in copy mode, check:
 * the transfers to device 0 that moved data, the NOFORCE syncs skipped, and
 * the bytes sent that the device held already. */
static void run_noforce(const char* what, const char* check, double sent, double skipped, double unchanged)
{
    tu_proc r;
    char c[64];
    snprintf(c, sizeof c, "STDCL_CHECK=%s", check);
    const char* args[] = {what, NULL};
    const char* env[] = {"STDCL_PROFILE=1", "STDCL_ZERO_COPY=0", "STDCL_PROFILE_FORMAT", c, NULL};
    tu_spawn(&r, tu_helper("helper_profile"), args, env, NULL, 120);
    if (r.status != 0 || !strstr(r.out, "noforce ok")) tu_proc_dump(&r, what);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "noforce ok"); /* right results: nothing needed was skipped */
    char* cpu = context_block(r.err, "stdcpu", 0);
    assert_non_null(cpu);
    char part[4096];
    assert_non_null(device_part(cpu, 0, part, sizeof part));
    check_transfer(part, "clmsync to device", sent, sent * 4096);
    double v[2] = {0, 0};
    if (skipped) {
        assert_int_equal(row_values(part, "clmsync skipped (NOFORCE)", v, 2), 2);
        assert_true(v[0] == skipped && v[1] == skipped * 4096);
    } else {
        assert_null(strstr(part, "skipped"));
    }
    if (unchanged) {
        assert_int_equal(row_values(part, "sent, already there", v, 2), 2);
        assert_true(v[0] == unchanged && v[1] == unchanged * 4096);
    } else {
        assert_null(strstr(part, "already there"));
    }
    free(cpu);
    tu_proc_free(&r);
}

static void test_noforce_skips_exactly_what_is_already_on_the_device(void** state)
{
    (void)state;
    /* Marked clean: the 10 syncs in the loop move nothing; after a kernel that
     * may write the input, the next one moves it (in, out, in). */
    run_noforce("noforce", "0", 3, 10, 0);
    /* Not marked: without the check every sync moves (2 + 1 + 10 + 1)... */
    run_noforce("noforce_nomark", "0", 14, 0, 0);
    /* ...with it the hashes say what is new: the same skips as marked, and the
     * plain sync of an unchanged input is counted as sent but already there. */
    run_noforce("noforce_nomark", "sync", 4, 10, 1);
    run_noforce("noforce", "sync", 3, 10, 0);
}

static void test_json_checker_refuses_broken_text(void** state)
{
    (void)state;
    assert_true(json_valid("{\"a\": [1, 2.5, -3e2, true, null, \"x\\u00e9\"]}"));
    assert_false(json_valid("{\"a\": [1, 2,]}"));
    assert_false(json_valid("{\"a\" 1}"));
    assert_false(json_valid("{\"a\": 1} x"));
    assert_false(json_valid("{\"a\": \"tab\there\"}"));
}

/* The JSON object of context n labelled label (a copy up to the next context). */
static char* json_context(const char* json, const char* label, int n)
{
    char key[128];
    snprintf(key, sizeof key, "{\"label\": \"%s\"", label);
    const char* p = nth_match(json, key, n);
    return p ? copy_to(p, strstr(p + 1, "{\"label\": ")) : NULL;
}

static void test_json_to_a_file_named_by_pid(void** state)
{
    (void)state;
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char var[PATH_MAX + 32];
    snprintf(var, sizeof var, "STDCL_PROFILE=%s/profile.%%p.json", dir);
    const char* env[] = {var, "STDCL_PROFILE_FORMAT=json", "STDCL_ZERO_COPY=0", NULL};
    tu_proc r;
    run_report(&r, env);
    assert_null(strstr(r.err, "stdcl profile")); /* the file has it, not stderr */
    long pid = 0;
    assert_int_equal(sscanf(r.out, "pid %ld", &pid), 1);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/profile.%ld.json", dir, pid);
    char* json = tu_read_file(path, NULL);
    if (!json) tu_proc_dump(&r, "no profile file");
    assert_non_null(json);
    assert_true(json_valid(json));
    char pidkey[64];
    snprintf(pidkey, sizeof pidkey, "{\"pid\": %ld, \"seconds\": ", pid);
    assert_true(strncmp(json, pidkey, strlen(pidkey)) == 0);
    char* cpu = json_context(json, "stdcpu", 0);
    assert_non_null(cpu);
    assert_contains(cpu, "\"builds\": {\"count\": 2, ");
    assert_contains(cpu, "\"compiled\": 2, ");
    assert_contains(cpu, "\"cache_hits\": 0, \"cache_misses\": 2, \"reopened\": 1}");
    assert_contains(cpu, "{\"index\": 0, ");
    assert_contains(cpu, "\"zero_copy\": false");
    /* Device 0, then device 1: each field exactly, every command timed. */
    const char* d1 = strstr(cpu, "{\"index\": 1, ");
    assert_non_null(d1);
    char* d0 = strndup(cpu, (size_t)(d1 - cpu));
    assert_contains(d0, "{\"name\": \"twice\", \"count\": 5, \"bytes\": 0, \"timed\": 5, ");
    assert_contains(d0, "\"to_device\": {\"count\": 2, \"bytes\": 8192, \"timed\": 2, ");
    assert_contains(d0, "\"to_host\": {\"count\": 2, \"bytes\": 8192, \"timed\": 2, ");
    assert_contains(d0, "\"device_copy\": {\"count\": 1, \"bytes\": 4096, \"timed\": 1, ");
    assert_contains(d0, "\"zero_copy_sync\": {\"count\": 0, ");
    assert_contains(d0, "\"untimed\": 0, \"failed\": 0}");
    assert_contains(d1, "{\"name\": \"twice\", \"count\": 4, \"bytes\": 0, \"timed\": 4, ");
    assert_contains(d1, "\"to_device\": {\"count\": 1, \"bytes\": 4096, \"timed\": 1, ");
    assert_contains(d1, "\"to_host\": {\"count\": 0, ");
    assert_contains(d1, "\"untimed\": 0, \"failed\": 0}");
    free(d0);
    free(cpu);
    char* u2 = json_context(json, "user context", 1);
    assert_non_null(u2);
    assert_contains(u2, "{\"name\": \"twice\", \"count\": 3, \"bytes\": 0, \"timed\": 3, ");
    assert_contains(u2, "\"cache_hits\": 1, \"cache_misses\": 0");
    free(u2);
    free(json);
    unlink(path);
    rmdir(dir);
    free(dir);
    tu_proc_free(&r);
}

static void test_off_prints_nothing(void** state)
{
    (void)state;
    const char* unset[] = {"STDCL_PROFILE", "STDCL_PROFILE_FORMAT", NULL};
    const char* zero[] = {"STDCL_PROFILE=0", "STDCL_PROFILE_FORMAT=json", NULL};
    const char* const* envs[] = {unset, zero};
    for (int i = 0; i < 2; i++) {
        tu_proc r;
        run_report(&r, envs[i]);
        assert_null(strstr(r.err, "stdcl profile"));
        assert_null(strstr(r.err, "\"contexts\""));
        tu_proc_free(&r);
    }
}

/* run_report with env: stderr says why, and a table report follows there. */
static void expect_table_on_stderr(const char* const* env, const char* why)
{
    tu_proc r;
    run_report(&r, env);
    assert_contains(r.err, why);
    assert_contains(r.err, "stdcl profile: process ");
    assert_contains(r.err, "\nstdcpu: platform '");
    tu_proc_free(&r);
}

static void test_unwritable_path_falls_back_to_stderr(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_PROFILE=/nonexistent-stdcl-dir/profile.txt", "STDCL_PROFILE_FORMAT", NULL};
    expect_table_on_stderr(env,
                           "stdcl: STDCL_PROFILE: cannot write '/nonexistent-stdcl-dir/profile.txt' (No such "
                           "file or directory); the profile follows here");
}

static void test_unknown_format_says_so_and_prints_a_table(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_PROFILE=1", "STDCL_PROFILE_FORMAT=xml", NULL};
    expect_table_on_stderr(env, "stdcl: warning: STDCL_PROFILE_FORMAT='xml' is not 'table' or 'json': a table follows");
}

/* STDCL_PROFILE takes the on/off words of every switch: "yes" is on (the table on
 * standard error), not a file named "yes". */
static void test_profile_yes_means_on(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_PROFILE=yes", "STDCL_PROFILE_FORMAT", NULL};
    expect_table_on_stderr(env, "stdcl profile: process ");
    struct stat st;
    assert_int_not_equal(stat("yes", &st), 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table_has_exact_counts_in_copy_mode),
    cmocka_unit_test(test_profile_yes_means_on),
    cmocka_unit_test(test_table_counts_zero_copy_syncs_apart),
    cmocka_unit_test(test_primitives_kernels_each_have_a_row),
    cmocka_unit_test(test_noforce_skips_exactly_what_is_already_on_the_device),
    cmocka_unit_test(test_json_checker_refuses_broken_text),
    cmocka_unit_test(test_json_to_a_file_named_by_pid),
    cmocka_unit_test(test_off_prints_nothing),
    cmocka_unit_test(test_unwritable_path_falls_back_to_stderr),
    cmocka_unit_test(test_unknown_format_says_so_and_prints_a_table),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "profile", tests, NULL, NULL); }
