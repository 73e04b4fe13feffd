/* SPDX-License-Identifier: MIT */
/* helper_syncrun.c: runs the generated programs of tests/sync_model.py through
 * libstdcl's public API, many in one process, and says for each what its host
 * reads saw and what the sync check printed.
 *
 *   helper_syncrun < programs.txt
 *
 * A program is a list of lines, one operation each, ending with "end":
 *   alloc A BYTES          a = clmalloc(cp, BYTES, 0) (cp: stdcpu, or stdgpu with
 *                          STDCL_TEST_CONTEXT=gpu)
 *   hw A OFF N             the host writes N new values at element OFF
 *   hr A OFF N             the host reads them
 *   up D A OFF N W         clmsyncn to device D (clmsync where it is all of A); W: wait
 *   dn D A OFF N W         the same back to the host
 *   wait D                 clwait(cp, D, CL_ALL_EVENT); D = -1: every device
 *   copy D O OO I IO N W   kernel on D: O[OO + i] = 3 * I[IO + i] + 1, i < N (I const)
 *   inc D A OFF N W        kernel on D: A[OFF + i] += 7, i < N (nothing const)
 *   iinc D A OFF N W       the same kernel given the interior pointer A + OFF
 *                          (a sub-buffer; OFF a multiple of 32 ints) and 0
 *   mcopy D DST SRC W      clmcopy(cp, D, SRC, DST): SRC's device copy to
 *                          DST's, as many elements as the smaller holds
 *   free A                 clfree(A) (an "alloc A" may follow)
 *   plain D A OFF N        a plain OpenCL kernel on stdcl_queue(cp, D), not
 *                          announced, writes N new values at element OFF
 *                          through stdcl_mem's object (then clFinish)
 * A call that fails prints "error OP MESSAGE" as it runs, before its
 * program's summary below.
 * Elements are ints.  The runner keeps the program's memory as one coherent
 * copy would hold it; a host read that sees other values is "wrong".  For each
 * program it prints "program ID", then "wrong OP" for the first operation
 * whose read saw other values (none if all were right), the allocations'
 * addresses ("alloc A ADDR"), the first line of each of the check's findings
 * with the operation it was printed at ("finding OP ..."; notes are not
 * findings), its allocation ("where ADDR, ...") and fix line ("fix ..."),
 * with SYNCRUN_STDERR set every other line the program wrote to standard
 * error ("stderr ..."), and "done". */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* raw_src =
    "__kernel void qfill(__global int* a, int off, int v)\n"
    "{ int i = get_global_id(0); a[off + i] = v + i; }\n";

static const char* src =
    "__kernel void kcopy(__global int* o, __global const int* in, int oo, int io)\n"
    "{ int i = get_global_id(0); o[oo + i] = 3 * in[io + i] + 1; }\n"
    "__kernel void kinc(__global int* a, int off)\n"
    "{ int i = get_global_id(0); a[off + i] += 7; }\n";

enum { MAXA = 8 };

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char* which = getenv("STDCL_TEST_CONTEXT");
    CLCONTEXT* cp = which && !strcmp(which, "gpu") ? stdgpu : stdcpu;
    if (!cp) {
        fprintf(stderr, "helper_syncrun: the context under test is NULL\n");
        return 3;
    }
    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel kcopy = clsym(cp, h, "kcopy", CLLD_NOW), kinc = clsym(cp, h, "kinc", CLLD_NOW);
    /* The plain OpenCL kernel of "plain": built by the program, not libstdcl. */
    cl_int err = CL_SUCCESS;
    cl_program raw = clCreateProgramWithSource(stdcl_clcontext(cp), 1, &raw_src, NULL, &err);
    if (raw) err = clBuildProgram(raw, 0, NULL, "", NULL, NULL);
    cl_kernel qfill = err == CL_SUCCESS ? clCreateKernel(raw, "qfill", &err) : NULL;
    if (!qfill) {
        fprintf(stderr, "helper_syncrun: the plain kernel: error %d\n", (int)err);
        return 3;
    }
    if (!kcopy || !kinc) {
        fprintf(stderr, "helper_syncrun: %s\n", clerror());
        return 3;
    }
    char line[256], errname[] = "/tmp/syncrun-XXXXXX";
    int errfd = mkstemp(errname), saved = dup(2);
    unlink(errname);
    int* mem[MAXA] = {0};
    int* shadow[MAXA] = {0};
    /* Every allocation's address, as the findings name them, until the
     * program's end is printed (an "alloc A" after "free A" adds one). */
    enum { MAXADDR = 256 };
    void* addr[MAXADDR] = {0};
    int addr_of[MAXADDR] = {0}, naddr = 0;
    size_t n_el[MAXA] = {0};
    int next = 1000, op = 0, wrong = -1;
    char id[64] = "";
    while (fgets(line, sizeof line, stdin)) {
        char w[16];
        long v[8] = {0};
        int got = sscanf(line, "%15s %ld %ld %ld %ld %ld %ld %ld", w, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]);
        if (got < 1) continue;
        if (!strcmp(w, "program")) {
            sscanf(line, "program %63s", id);
            op = 0;
            wrong = -1;
            next = 1000;  /* each program's values the same wherever it runs (sync_model.py's too) */
            if (ftruncate(errfd, 0) || lseek(errfd, 0, SEEK_SET)) return 3;
            fflush(stderr);
            dup2(errfd, 2);
            continue;
        }
        if (!strcmp(w, "end")) {
            clwait(cp, CL_ALL_DEVICES, CL_ALL_EVENT);
            for (int a = 0; a < MAXA; a++) {
                if (mem[a]) clfree(mem[a]);
                free(shadow[a]);
                mem[a] = NULL, shadow[a] = NULL, n_el[a] = 0;
            }
            fflush(stderr);
            dup2(saved, 2);
            printf("program %s\n", id);
            if (wrong >= 0) printf("wrong %d\n", wrong);
            for (int i = 0; i < naddr; i++) printf("alloc %d %p\n", addr_of[i], addr[i]);
            naddr = 0;
            char buf[4096];
            FILE* f = fdopen(dup(errfd), "r");
            rewind(f);
            int at = 0;
            while (fgets(buf, sizeof buf, f))
                if (!strncmp(buf, "syncrun-op ", 11))
                    at = atoi(buf + 11);
                else if (!strncmp(buf, "stdcl: sync check:", 18) && !strstr(buf, "sync check: note:"))
                    printf("finding %d %s", at, buf + 19);
                else if (!strncmp(buf, "  allocation: ", 14))
                    printf("where %s", buf + 14);
                else if (!strncmp(buf, "  fix:", 6))
                    printf("fix %s", buf + 7);
                else if (getenv("SYNCRUN_STDERR"))
                    printf("stderr %s", buf);
            fclose(f);
            printf("done\n");
            continue;
        }
        op++;
        fprintf(stderr, "syncrun-op %d\n", op);
        int nw = 0;
        if (!strcmp(w, "alloc")) {
            int a = (int)v[0];
            n_el[a] = (size_t)v[1] / 4;
            mem[a] = (int*)clmalloc(cp, (size_t)v[1], 0);
            if (naddr < MAXADDR) addr_of[naddr] = a, addr[naddr++] = mem[a];
            shadow[a] = (int*)calloc(n_el[a], sizeof(int));
            if (!mem[a]) printf("error %d %s\n", op, clerror());
            else memcpy(shadow[a], mem[a], n_el[a] * sizeof(int));
        } else if (!strcmp(w, "hw")) {
            for (long i = v[1]; i < v[1] + v[2]; i++) mem[v[0]][i] = shadow[v[0]][i] = next++;
        } else if (!strcmp(w, "hr")) {
            for (long i = v[1]; i < v[1] + v[2]; i++)
                if (mem[v[0]][i] != shadow[v[0]][i] && wrong < 0) wrong = op;  /* all are read: the check sees each page */
        } else if (!strcmp(w, "up") || !strcmp(w, "dn")) {
            int flags = (w[0] == 'u' ? CL_MEM_DEVICE : CL_MEM_HOST) | (v[4] ? CL_EVENT_WAIT : CL_EVENT_NOWAIT);
            int a = (int)v[1];
            int ok = v[2] == 0 && (size_t)v[3] == n_el[a]
                         ? clmsync(cp, (unsigned)v[0], mem[a], flags) != 0
                         : clmsyncn(cp, (unsigned)v[0], mem[a] + v[2], (size_t)v[3] * 4, flags) != 0;
            if (!ok) printf("error %d %s\n", op, clerror());
            (void)nw;
        } else if (!strcmp(w, "wait")) {
            clwait(cp, v[0] < 0 ? CL_ALL_DEVICES : (unsigned)v[0], CL_ALL_EVENT);
        } else if (!strcmp(w, "copy")) {
            clndrange_t ndr = clndrange_init1d(0, (size_t)v[5], 1);
            int flags = v[6] ? CL_EVENT_WAIT : CL_EVENT_NOWAIT;
            if (!clforka(cp, (unsigned)v[0], kcopy, &ndr, flags, mem[v[1]], mem[v[3]], (int)v[2], (int)v[4]))
                printf("error %d %s\n", op, clerror());
            for (long i = 0; i < v[5]; i++) shadow[v[1]][v[2] + i] = 3 * shadow[v[3]][v[4] + i] + 1;
        } else if (!strcmp(w, "inc")) {
            clndrange_t ndr = clndrange_init1d(0, (size_t)v[3], 1);
            int flags = v[4] ? CL_EVENT_WAIT : CL_EVENT_NOWAIT;
            if (!clforka(cp, (unsigned)v[0], kinc, &ndr, flags, mem[v[1]], (int)v[2]))
                printf("error %d %s\n", op, clerror());
            for (long i = 0; i < v[3]; i++) shadow[v[1]][v[2] + i] += 7;
        } else if (!strcmp(w, "iinc")) {
            clndrange_t ndr = clndrange_init1d(0, (size_t)v[3], 1);
            int flags = v[4] ? CL_EVENT_WAIT : CL_EVENT_NOWAIT;
            if (!clforka(cp, (unsigned)v[0], kinc, &ndr, flags, mem[v[1]] + v[2], 0))
                printf("error %d %s\n", op, clerror());
            for (long i = 0; i < v[3]; i++) shadow[v[1]][v[2] + i] += 7;
        } else if (!strcmp(w, "mcopy")) {
            int flags = v[3] ? CL_EVENT_WAIT : CL_EVENT_NOWAIT;
            size_t n = n_el[v[1]] < n_el[v[2]] ? n_el[v[1]] : n_el[v[2]];
            if (!clmcopy(cp, (unsigned)v[0], mem[v[2]], mem[v[1]], flags)) printf("error %d %s\n", op, clerror());
            memcpy(shadow[v[1]], shadow[v[2]], n * sizeof(int));
        } else if (!strcmp(w, "free")) {
            int a = (int)v[0];
            if (clfree(mem[a]) != 0) printf("error %d %s\n", op, clerror());
            free(shadow[a]);
            mem[a] = NULL, shadow[a] = NULL, n_el[a] = 0;
        } else if (!strcmp(w, "plain")) {
            /* Not announced: enqueued on stdcl_queue's queue through stdcl_mem's object. */
            cl_command_queue q = stdcl_queue(cp, (unsigned)v[0]);
            cl_mem m = stdcl_mem(cp, (unsigned)v[0], mem[v[1]]);
            int off = (int)v[2], val = next;
            size_t gs = (size_t)v[3];
            clSetKernelArg(qfill, 0, sizeof m, &m);
            clSetKernelArg(qfill, 1, sizeof off, &off);
            clSetKernelArg(qfill, 2, sizeof val, &val);
            if (!q || !m || clEnqueueNDRangeKernel(q, qfill, 1, NULL, &gs, NULL, 0, NULL, NULL) != CL_SUCCESS ||
                clFinish(q) != CL_SUCCESS)
                printf("error %d plain kernel\n", op);
            for (long i = 0; i < v[3]; i++) shadow[v[1]][v[2] + i] = next++;
        }
    }
    return 0;
}
