/* SPDX-License-Identifier: MIT */
/* test_synccheck.c: STDCL_CHECK=sync finds a kernel that reads a device copy
 * older than the host's (the forgotten clmsync(..., CL_MEM_DEVICE)) and host
 * code that reads results a kernel changed but no clmsync(..., CL_MEM_HOST)
 * brought back, in zero-copy and in copy mode alike, with every field of the
 * report; a real segmentation fault still crashes, or reaches the program's
 * own handler; its
 * actions (report, error, abort); and stays silent on correct programs,
 * slices over two devices among them; and STDCL_CHECK=fill's pattern in new
 * host memory and device copies.  Each case runs helper_synccheck in a
 * process of its own (the mode is read when the library loads), on stdcpu, or
 * on stdgpu with STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

/* Runs scenario `what` with STDCL_CHECK=check and STDCL_ZERO_COPY=zc. */
static void run(tu_proc* r, const char* what, const char* check, int zc)
{
    char c[64], z[32];
    snprintf(c, sizeof c, "STDCL_CHECK=%s", check);
    snprintf(z, sizeof z, "STDCL_ZERO_COPY=%d", zc);
    const char* args[] = {what, NULL};
    const char* env[] = {c, z, NULL};
    tu_spawn(r, tu_helper("helper_synccheck"), args, env, NULL, 120);
}

static int count(const char* hay, const char* needle) { return hay ? tu_count(hay, needle) : 0; }

static void test_forgotten_upload_is_reported_in_both_modes(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "forgot_upload", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "helper_synccheck forgot_upload");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "kernel 'axpy' on device 0 (");
        assert_contains(r.err, "reads argument 1 (float*) which was never sent to device 0");
        assert_contains(r.err, "  allocation: 0x");
        assert_contains(r.err, "4096 bytes, made at ");
        assert_contains(r.err, "helper_synccheck+0x");
        assert_contains(r.err, "the kernel sees it from byte 0");
        assert_contains(r.err, "  launched by clforka at ");
        assert_contains(r.err, "  last sync with device 0: none");
        assert_contains(r.err, "  fix: clmsync(cp, 0, ptr, CL_MEM_DEVICE), or clmsyncn(cp, 0, ..., CL_MEM_DEVICE) of the part device 0 reads, after the host's last write to it and "
                               "before this launch");
        assert_contains(r.out, "launch: ok");
        tu_proc_free(&r);
    }
}

/* The same slip with a kernel that declares y without const: the check runs
 * the kernel again with y's device copy overwritten, sees other results, and
 * reports it once. */
static void test_forgotten_upload_of_a_non_const_argument_is_reported_in_both_modes(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "forgot_upload_nc", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "helper_synccheck forgot_upload_nc");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "kernel 'axpy_nc' on device 0 (");
        assert_contains(r.err, "reads argument 1 (float*) which was never sent to device 0");
        assert_contains(r.err, "the kernel's results depend on it");
        assert_contains(r.err, "  launched by clforka at ");
        assert_contains(r.err, "  fix: clmsync(cp, 0, ptr, CL_MEM_DEVICE), or clmsyncn(cp, 0, ..., CL_MEM_DEVICE) of the part device 0 reads, after the host's last write to it and "
                               "before this launch");
        assert_int_equal(count(r.out, "launch: ok"), 2);
        tu_proc_free(&r);
    }
}

static void test_host_write_after_upload_is_reported_in_both_modes(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "stale_upload", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "reads argument 0 (float*) whose copy on device 0 is older than the host's: the "
                               "host changed bytes 28 to 31 of the allocation after device 0's copy of them was "
                               "last given a value, and the kernel's results depend on it");
        assert_contains(r.err, "  fix: clmsyncn(cp, 0, (char*)ptr + 28, 4, CL_MEM_DEVICE) after the host's last "
                               "write to it and before this launch");
        assert_contains(r.err, "  last sync with device 0: clmsync to device 0 at ");
        tu_proc_free(&r);
    }
}

static void test_a_finding_is_reported_once_per_allocation_and_kind(void** state)
{
    (void)state;
    tu_proc r;
    run(&r, "loop", "sync", 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(count(r.out, "launch: ok"), 3);
    assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
    tu_proc_free(&r);
}

static void test_nowait_launches_are_checked_too(void** state)
{
    (void)state;
    tu_proc r;
    run(&r, "nowait", "sync", 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(count(r.err, "which was never sent to device 0"), 1);
    tu_proc_free(&r);
}

static void test_action_error_fails_the_launch_with_stdcl_esync(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "stale_upload", "sync,error", zc);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "launch: failed clforka: sync check: kernel 'axpy' on device 0");
        assert_not_contains(r.out, "launch: ok");
        assert_int_equal(count(r.err, "stdcl: sync check:"), 0); /* the message is clerror()'s */
        tu_proc_free(&r);
    }
}

static void test_action_abort_aborts_after_the_report(void** state)
{
    (void)state;
    tu_proc r;
    run(&r, "forgot_upload", "abort,sync", 0);
    assert_int_equal(r.status, 128 + 6); /* SIGABRT */
    assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
    assert_not_contains(r.out, "launch: ok");
    tu_proc_free(&r);
}

static void test_host_read_of_results_never_brought_back_is_reported(void** state)
{
    (void)state;
    const char* scenarios[] = {"forgot_download", "forgot_download_nowait"};
    for (size_t s = 0; s < tu_countof(scenarios); s++)
        for (int zc = 1; zc >= 0; zc--) {
            tu_proc r;
            run(&r, scenarios[s], "sync", zc);
            if (r.status != 0) tu_proc_dump(&r, scenarios[s]);
            assert_int_equal(r.status, 0);
            assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
            assert_contains(r.err, "sync check: the host reads byte 40 of an allocation that kernel 'axpy' (argument "
                                   "0, float*, launched by clforka at ");
            assert_contains(r.err, ") changed on device 0 (");
            assert_contains(r.err, "no clmsync(..., CL_MEM_HOST) from device 0 brought it back");
            assert_contains(r.err, "  allocation: 0x");
            assert_contains(r.err, "4096 bytes, made at ");
            assert_contains(r.err, "  the access: the instruction at ");
            assert_contains(r.err, "  backtrace: ");
            assert_contains(r.err, "(helper_synccheck+0x");
            assert_contains(r.err, "  last sync with device 0: clmsync to device 0 at ");
            assert_contains(r.err, "  fix: clmsync(cp, 0, ptr, CL_MEM_HOST) after the kernel and before the host uses "
                                   "its results");
            /* Under the check every device has a copy of its own, as a GPU does:
             * the program reads the host's own value, never the kernel's. */
            assert_contains(r.out, "read: 10");
            assert_contains(r.out, "sync: ok");
            assert_contains(r.out, "result: 21");
            tu_proc_free(&r);
        }
}

static void test_host_read_finding_under_error_fails_the_next_call(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "forgot_download", "sync,error", zc);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "launch: ok");
        assert_contains(r.out, "sync: failed clmsync: sync check: the host reads byte 40 of an allocation");
        assert_int_equal(count(r.err, "stdcl: sync check:"), 0);
        tu_proc_free(&r);
    }
}

static void test_foreign_commands_announced_are_checked_like_kernels(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "foreign_correct", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "foreign_correct");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 0);
        assert_contains(r.out, "begin: ok");
        assert_contains(r.out, "end: 0");
        assert_contains(r.out, "result: 21");
        tu_proc_free(&r);

        /* The host reads a foreign command's result never brought back. */
        run(&r, "foreign_forgot_download", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: the host reads byte 40 of an allocation that a foreign command "
                               "(announced by clforeign_begin at ");
        assert_contains(r.err, ") changed on device 0 (");
        assert_contains(r.out, "sync: ok");
        assert_contains(r.out, "result: 21");
        tu_proc_free(&r);

        /* A foreign command reads an input never sent: reported at clforeign_begin,
         * or clforeign_begin's error with the action "error". */
        run(&r, "foreign_forgot_upload", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: a foreign command on device 0 (");
        assert_contains(r.err, "reads uses[1] which was never sent to device 0");
        assert_contains(r.err, "fix: clmsync(cp, 0, ptr, CL_MEM_DEVICE), or clmsyncn(cp, 0, ..., CL_MEM_DEVICE) of the part "
                               "device 0 reads, after the host's last write to it and before "
                               "clforeign_begin");
        assert_contains(r.out, "begin: ok");
        tu_proc_free(&r);
        run(&r, "foreign_forgot_upload", "sync,error", zc);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "begin: clforeign_begin: sync check: a foreign command on device 0");
        tu_proc_free(&r);

        /* Memory a plain command on stdcl_queue's queue wrote, never announced: the
         * result is right, and a note says once that it is not checked. */
        run(&r, "foreign_unannounced", "sync,error", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "stdcl: sync check: note: the allocation at 0x");
        assert_contains(r.err, "is not checked for lost updates (clmsync at ");
        assert_contains(r.err, "stdcl_mem handed out a device object of it, and no foreign command on it was announced");
        assert_int_equal(count(r.out, "sync: ok"), 2);
        assert_contains(r.out, "result: 21");
        tu_proc_free(&r);
    }
}

static void test_a_device_part_never_brought_back_names_that_device(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "page_slices_forgot", "sync", zc);
        assert_int_equal(r.status, 0);
        if (strstr(r.out, "skip: needs 2 devices")) {
            tu_proc_free(&r);
            skip();
        }
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "the host reads byte 16384 of an allocation that kernel 'axpy'");
        assert_contains(r.err, "changed on device 1 (");
        assert_contains(r.err, "fix: clmsyncn(cp, 1, (char*)ptr + 16384, 16384, CL_MEM_HOST)");
        tu_proc_free(&r);
    }
}

static void test_a_host_change_overwritten_unread_is_a_lost_update(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "lost_update", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clmsync from device 0 (");
        assert_contains(r.err, "overwrites host changes nobody read: the host changed bytes 20 to 23 of the "
                               "allocation after device 0's copy of them was last given a value");
        assert_contains(r.err, "(a lost update)");
        assert_contains(r.err, "  the transfer back: clmsync at ");
        assert_contains(r.err, "  last sync with device 0: clmsync from device 0 at ");
        assert_contains(r.err, "  fix: clmsyncn(cp, 0, (char*)ptr + 20, 4, CL_MEM_DEVICE) after the host's change "
                               "and before this transfer");
        assert_contains(r.out, "sync: ok");
        tu_proc_free(&r);
        run(&r, "lost_update", "sync,error", zc);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "sync: failed clmsync: sync check: clmsync from device 0");
        assert_contains(r.out, "x5: -7.5"); /* refused: the host's change is kept */
        tu_proc_free(&r);
    }
}

static void test_host_access_while_a_nowait_command_is_pending_is_reported(void** state)
{
    (void)state;
    const char* scenarios[] = {"nowait_upload_write", "nowait_input_write", "nowait_download_read"};
    const char* texts[] = {"the host writes byte 12 of an allocation while clmsync to device 0 (CL_EVENT_NOWAIT) is "
                           "still pending: the command may read it before or after this access",
                           "the host writes byte 12 of an allocation while kernel 'axpy' on device 0 (",
                           "the host reads byte 40 of an allocation while clmsync from device 0 (CL_EVENT_NOWAIT) is "
                           "still pending: the command may write it before or after this access"};
    for (size_t s = 0; s < tu_countof(scenarios); s++)
        for (int zc = 1; zc >= 0; zc--) {
            tu_proc r;
            run(&r, scenarios[s], "sync", zc);
            if (r.status != 0 || count(r.err, "stdcl: sync check:") != 1) tu_proc_dump(&r, scenarios[s]);
            assert_int_equal(r.status, 0);
            assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
            assert_contains(r.err, texts[s]);
            assert_contains(r.err, "  the access: the instruction at ");
            assert_contains(r.err, "  backtrace: ");
            assert_contains(r.err, "  fix: wait for the command (clwait(cp, 0, CL_ALL_EVENT)");
            assert_contains(r.out, "sync: ok");
            tu_proc_free(&r);
        }
    /* With "error" the next call fails. */
    tu_proc r;
    run(&r, "nowait_input_write", "sync,error", 0);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "wait: failed clwait: sync check: the host writes byte 12");
    tu_proc_free(&r);
}

static void test_real_faults_still_crash_or_reach_the_programs_handler(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "segv", "sync", zc);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        assert_true(r.status != 0 && r.status != 7); /* the sanitizer's handler, chained to, ends it */
#else
        assert_int_equal(r.status, 128 + 11); /* SIGSEGV, at the program's address */
#endif
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.out, "sync: ok");
        assert_not_contains(r.out, "not reached");
        tu_proc_free(&r);
        run(&r, "segv_own", "sync", zc);
        assert_int_equal(r.status, 7);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1); /* the protected page is still watched */
        assert_contains(r.out, "own handler");
        assert_not_contains(r.out, "not reached");
        tu_proc_free(&r);
    }
}

/* One output split over two devices by index space, each half brought back
 * with clmsyncn: a half left out is reported naming its device, whichever half
 * the host reads first, in both modes; device 1 writing all of it and only
 * device 0's half coming back is reported naming device 1.  The splitnw_ forms
 * are the guide's (NOWAIT transfers and launches, one wait, 2^20 floats): the
 * host touches hundreds of pages before the next library call, and the first
 * access to each is judged. */
static void test_a_split_output_half_left_out_names_its_device(void** state)
{
    (void)state;
    const char* scenarios[] = {"split_skip1_read0",   "split_skip1_read1",   "split_skip0_read1",
                               "split_overlap",       "splitnw_skip1_read0", "splitnw_skip1_read1",
                               "splitnw_skip0_read0", "splitnw_skip0_read1"};
    const char* names[] = {"changed on device 1", "changed on device 1", "changed on device 0", "changed on device 1",
                           "changed on device 1", "changed on device 1", "changed on device 0", "changed on device 0"};
    for (size_t i = 0; i < tu_countof(scenarios); i++)
        for (int zc = 1; zc >= 0; zc--) {
            tu_proc r;
            run(&r, scenarios[i], "sync", zc);
            if (r.status != 0) tu_proc_dump(&r, scenarios[i]);
            assert_int_equal(r.status, 0);
            if (strstr(r.out, "skip: needs 2 devices")) {
                tu_proc_free(&r);
                return;
            }
            /* split_overlap: device 1's kernel also reads device 0's half,
             * which device 0 changed and nobody brought over: a finding too. */
            int overlap = !strcmp(scenarios[i], "split_overlap");
            assert_int_equal(count(r.err, "stdcl: sync check:"), overlap ? 2 : 1);
            if (overlap)
                assert_contains(r.err, "reads argument 0 (float*) whose copy on device 1 is older than device 0's: a "
                                       "command there wrote bytes 0 to 16383 of the allocation");
            assert_contains(r.err, names[i]);
            tu_proc_free(&r);
        }
}

/* A pipeline over two devices through the host: device 1's transfer of bytes
 * that device 0's NOWAIT transfer, not waited for, still writes (or reads) is
 * reported, naming both and the wait that orders them, in both modes. */
static void test_a_transfer_racing_one_pending_on_another_device_is_reported(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "relay_race", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "relay_race");
        assert_int_equal(r.status, 0);
        if (strstr(r.out, "skip: needs 2 devices")) {
            tu_proc_free(&r);
            return;
        }
        /* The race is the first finding.  Where device 1 got the bytes from
         * before device 0's landed (a GPU's transfer may still run), device 1's
         * kernel then reads a copy older than the host's: a second finding, as
         * true as the first; on PoCL the transfer has landed. */
        int n = count(r.err, "stdcl: sync check:");
        assert_true(n >= 1 && n <= 2);
        const char* race = strstr(r.err, "stdcl: sync check: clmsync to device 1 (");
        assert_non_null(race);
        assert_ptr_equal(race, strstr(r.err, "stdcl: sync check:"));
        if (n == 2)
            assert_contains(r.err, "whose copy on device 1 is older than the host's");
        assert_contains(r.err, "reads bytes 0 to 4095 of an allocation while clmsync from device 0 (CL_EVENT_NOWAIT), "
                               "still pending, writes them");
        assert_contains(r.err, "the device may get the bytes from before that transfer lands or from after");
        assert_contains(r.err, "  the pending one: enqueued at ");
        if (n == 1)
            assert_int_equal(count(r.err, "(helper_synccheck+0x"), 3); /* where it was made, and the two transfers */
        assert_contains(r.err, "  fix: clwait(cp, 0, CL_MEM_EVENT)");
        tu_proc_free(&r);

        run(&r, "relay_overwrite", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "relay_overwrite");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clmsync from device 1 (");
        assert_contains(r.err, "writes bytes 0 to 4095 of an allocation while clmsync to device 0 (CL_EVENT_NOWAIT), "
                               "still pending, reads them");
        tu_proc_free(&r);
    }
}

/* clsort is a command like a kernel: keys never sent, and sorted keys read
 * without bringing them back, are reported in both modes. */
static void test_clsort_is_checked_like_a_kernel(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "sort_forgot_upload", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "sort_forgot_upload");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clsort on device 0 (");
        assert_contains(r.err, "reads its keys which was never sent to device 0");
        assert_contains(r.err, "  called by clsort at ");
        assert_contains(r.out, "sort: ok");
        tu_proc_free(&r);

        run(&r, "sort_forgot_download", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "that clsort of 1024 int keys changed on device 0");
        tu_proc_free(&r);
    }
}

/* The host changes one result and sends just those bytes (clmsyncn), then
 * brings the whole back: right, and silent.  Sending the whole allocation
 * instead puts the host's stale bytes over the results: a lost update. */
static void test_a_host_write_is_a_finding_only_when_a_transfer_loses_a_change(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "partial_write_whole", "sync", zc);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clmsync to device 0 (");
        assert_contains(r.err, "sends the host's bytes over results a command wrote there that the host does not "
                               "have: bytes 0 to 4091 of the allocation (a lost update)");
        assert_contains(r.err, "(no single transfer fixes it: send only the bytes the host changed");
        tu_proc_free(&r);
    }
}

/* clmcopy writes only the bytes it copies (the rest of the destination's
 * device copy is the host's, and reading it is right), and reads its source's
 * device copy as a kernel does: a source the host changed after its upload is
 * reported, naming clmcopy and the bytes to send, in both memory modes. */
static void test_clmcopy_writes_what_it_copies_and_reads_its_source(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "mcopy_ok", "sync,error", zc);
        if (r.status != 0 || count(r.err, "sync check:")) tu_proc_dump(&r, "mcopy_ok");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "sync check:"), 0);
        assert_contains(r.out, "copy: ok");
        tu_proc_free(&r);
        run(&r, "mcopy_stale", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "mcopy_stale");
        assert_int_equal(r.status, 0);
        /* In both modes, as for a kernel: a GPU would copy the old bytes. */
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clmcopy on device 0 (");
        assert_contains(r.err, "reads its source whose copy on device 0 is older than the host's");
        assert_contains(r.err, "fix: clmsyncn(cp, 0, (char*)ptr + 12, 4, CL_MEM_DEVICE)");
        tu_proc_free(&r);
    }
}

/* A plain OpenCL kernel on stdcl_queue's queue writes an allocation through
 * stdcl_mem's object, not announced (the documents say nothing needs to be):
 * the library's kernel that then reads it is right and the check silent; the
 * host's older bytes sent over the kernel's results are reported as a lost
 * update, with a fix that is not that upload again; the host reading them
 * before bringing them back is reported. */
static void test_commands_on_stdcl_queue_are_seen_by_their_effect(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "queue_ok", "sync,error", zc);
        if (r.status != 0 || count(r.err, "sync check:")) tu_proc_dump(&r, "queue_ok");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "sync check:"), 0);
        assert_contains(r.out, "launch: ok");
        assert_contains(r.out, "wrong: 0");
        tu_proc_free(&r);
        run(&r, "queue_clobber", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "queue_clobber");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: clmsync to device 0 (");
        /* From word 0 or 1: y[0] = 3 * 0 is the value a GPU's new buffer held. */
        assert_contains(r.err, "sends the host's bytes over results a command wrote there that the host does not "
                               "have: bytes ");
        assert_contains(r.err, " to 4095 of the allocation (a lost update)");
        tu_proc_free(&r);
        run(&r, "queue_read", "sync", zc);
        if (r.status != 0) tu_proc_dump(&r, "queue_read");
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
        assert_contains(r.err, "sync check: the host reads byte 4 of an allocation that a command the check does not "
                               "see (on the device object stdcl_mem handed out");
        assert_contains(r.err, "changed on device 0");
        tu_proc_free(&r);
    }
}

static void test_correct_programs_are_silent(void** state)
{
    (void)state;
    const char* scenarios[] = {"correct",        "slices",         "const_input",    "page_slices",  "unwritten_read",
                               "nowait_correct", "output_only_nc", "split_ok",       "partial_write",
                               "relay_ok",       "sort_correct",   "splitnw_ok"};
    for (size_t s = 0; s < tu_countof(scenarios); s++)
        for (int zc = 1; zc >= 0; zc--) {
            tu_proc r;
            run(&r, scenarios[s], "sync,error", zc);
            if (r.status != 0 || count(r.out, "failed")) tu_proc_dump(&r, scenarios[s]);
            if (r.status == 0 && strstr(r.out, "skip: needs 2 devices")) {
                tu_proc_free(&r);
                continue;
            }
            assert_int_equal(r.status, 0);
            assert_int_equal(count(r.out, "launch: failed"), 0);
            assert_int_equal(count(r.err, "sync check"), 0);
            assert_contains(r.out, "result: ");
            /* And it computes what it computes without the check (output_only_nc:
             * after the check ran its kernel more times to look at its output). */
            tu_proc plain;
            run(&plain, scenarios[s], "off", zc);
            assert_int_equal(plain.status, 0);
            assert_non_null(strstr(plain.out, "result: "));
            assert_string_equal(strstr(r.out, "result: "), strstr(plain.out, "result: "));
            tu_proc_free(&plain);
            tu_proc_free(&r);
        }
}

static void test_check_off_or_overrun_only_says_nothing(void** state)
{
    (void)state;
    const char* modes[] = {"0", "1", "overrun"};
    for (size_t m = 0; m < tu_countof(modes); m++) {
        tu_proc r;
        run(&r, "forgot_upload", modes[m], 0);
        assert_int_equal(r.status, 0);
        assert_int_equal(count(r.err, "sync check"), 0);
        tu_proc_free(&r);
    }
    /* An unknown word is warned about, the rest applies. */
    tu_proc r;
    run(&r, "forgot_upload", "sync,bogus", 0);
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "STDCL_CHECK: 'bogus' is not one of overrun, sync, fill, all, report, error, abort");
    assert_int_equal(count(r.err, "stdcl: sync check:"), 1);
    tu_proc_free(&r);
}

static void test_fill_makes_new_memory_a_signalling_nan(void** state)
{
    (void)state;
    for (int zc = 1; zc >= 0; zc--) {
        tu_proc r;
        run(&r, "fill", "fill", zc);
        if (r.status != 0) tu_proc_dump(&r, "helper_synccheck fill");
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "host: 0x7fa00000");
        assert_contains(r.out, "launch: ok");
        assert_contains(r.out, "nan: 1"); /* the input never sent reads as NaN, on the host's copy or the device's */
        assert_int_equal(count(r.err, "sync check"), 0);
        tu_proc_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forgotten_upload_is_reported_in_both_modes),
        cmocka_unit_test(test_forgotten_upload_of_a_non_const_argument_is_reported_in_both_modes),
        cmocka_unit_test(test_host_write_after_upload_is_reported_in_both_modes),
        cmocka_unit_test(test_a_split_output_half_left_out_names_its_device),
        cmocka_unit_test(test_commands_on_stdcl_queue_are_seen_by_their_effect),
        cmocka_unit_test(test_clmcopy_writes_what_it_copies_and_reads_its_source),
        cmocka_unit_test(test_a_transfer_racing_one_pending_on_another_device_is_reported),
        cmocka_unit_test(test_clsort_is_checked_like_a_kernel),
        cmocka_unit_test(test_a_host_write_is_a_finding_only_when_a_transfer_loses_a_change),
        cmocka_unit_test(test_a_finding_is_reported_once_per_allocation_and_kind),
        cmocka_unit_test(test_nowait_launches_are_checked_too),
        cmocka_unit_test(test_action_error_fails_the_launch_with_stdcl_esync),
        cmocka_unit_test(test_action_abort_aborts_after_the_report),
        cmocka_unit_test(test_host_read_of_results_never_brought_back_is_reported),
        cmocka_unit_test(test_host_read_finding_under_error_fails_the_next_call),
        cmocka_unit_test(test_foreign_commands_announced_are_checked_like_kernels),
        cmocka_unit_test(test_a_device_part_never_brought_back_names_that_device),
        cmocka_unit_test(test_a_host_change_overwritten_unread_is_a_lost_update),
        cmocka_unit_test(test_host_access_while_a_nowait_command_is_pending_is_reported),
        cmocka_unit_test(test_real_faults_still_crash_or_reach_the_programs_handler),
        cmocka_unit_test(test_correct_programs_are_silent),
        cmocka_unit_test(test_check_off_or_overrun_only_says_nothing),
        cmocka_unit_test(test_fill_makes_new_memory_a_signalling_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
