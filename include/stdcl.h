/* SPDX-License-Identifier: MIT */
/* stdcl.h: the public interface of libstdcl, a UNIX-style C runtime over OpenCL.
 *
 * Include this one header and link with -lstdcl (pkg-config stdcl).  It is C99
 * and C++ compatible.  Source compatible with the STDCL 1.6 API.
 *
 * Conventions, for every call below:
 * - A call that returns a pointer or a cl_event returns NULL on failure; a
 *   call that returns int returns 0 (or a non-negative count) on success and
 *   a negative code on failure: an OpenCL error code (CL_INVALID_...), or one
 *   of the STDCL_E* codes below.  No call aborts or exits the process.
 * - clerror() gives a human-readable message for the last failure in the
 *   calling thread, like dlerror().
 * - Every call may be made from any thread.
 *
 * Fork: the default contexts are created when the library loads.  A child
 * made by fork() without exec() must not use OpenCL (PoCL hangs, other
 * drivers misbehave); fork() followed by exec() is fine.
 */
#ifndef STDCL_H
#define STDCL_H

#if defined(__OPENCL_VERSION__) || defined(__stdcl_kernel__)
/* ------------------------------------------------------------------------ */
/* Kernel side                                                               */
/* ------------------------------------------------------------------------ */
/* OpenCL C that includes <stdcl.h> gets this part: every build libstdcl
 * makes (clopen, clsopen, clbuild and the clcc tool) passes -D __stdcl_kernel__
 * and -I <the installed include directory>.  It holds the names STDCL 1.6
 * kernels used: the __builtin_vector_<type><n>(...) constructors. */
#ifndef __STDCL__
#define __STDCL__
#endif
#define STDCL_KERNEL_VEC2(t, x, y) ((t##2)((x), (y)))
#define STDCL_KERNEL_VEC4(t, x, y, z, w) ((t##4)((x), (y), (z), (w)))
#define __builtin_vector_char2(x, y) STDCL_KERNEL_VEC2(char, x, y)
#define __builtin_vector_char4(x, y, z, w) STDCL_KERNEL_VEC4(char, x, y, z, w)
#define __builtin_vector_uchar2(x, y) STDCL_KERNEL_VEC2(uchar, x, y)
#define __builtin_vector_uchar4(x, y, z, w) STDCL_KERNEL_VEC4(uchar, x, y, z, w)
#define __builtin_vector_int2(x, y) STDCL_KERNEL_VEC2(int, x, y)
#define __builtin_vector_int4(x, y, z, w) STDCL_KERNEL_VEC4(int, x, y, z, w)
#define __builtin_vector_uint2(x, y) STDCL_KERNEL_VEC2(uint, x, y)
#define __builtin_vector_uint4(x, y, z, w) STDCL_KERNEL_VEC4(uint, x, y, z, w)
#define __builtin_vector_float2(x, y) STDCL_KERNEL_VEC2(float, x, y)
#define __builtin_vector_float4(x, y, z, w) STDCL_KERNEL_VEC4(float, x, y, z, w)
#define __builtin_vector_double2(x, y) STDCL_KERNEL_VEC2(double, x, y)

#else /* the host side: the rest of this file */

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <CL/cl_gl.h>
#include <stdarg.h>
#include <stddef.h>
/* What STDCL 1.6's stdcl.h brought in, which its programs rely on. */
#include <stdio.h>
#include <string.h>
#if !defined(_WIN32)
#include <sys/queue.h>
#endif

#include "stdcl_version.h"

#if defined(_WIN32)
#define STDCL_API __declspec(dllexport)
#elif defined(__GNUC__)
#define STDCL_API __attribute__((visibility("default")))
#else
#define STDCL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/* The version of the library actually loaded, as "MAJOR.MINOR.PATCH".
 * Compare with STDCL_VERSION_STRING to detect a header/library mismatch. */
STDCL_API const char* stdcl_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Negative return codes.  An OpenCL failure is mapped to one of them by one
 * table (memory and resources: STDCL_ENOMEM; compiler: STDCL_EBUILD; invalid
 * sizes and arguments: STDCL_EINVAL; the rest: STDCL_ECL), and clerror() names
 * the OpenCL function and its status. */
#define STDCL_EINVAL   (-9001) /* an argument is invalid */
#define STDCL_ENOMEM   (-9002) /* out of host or device memory */
#define STDCL_ENOENT   (-9003) /* file, kernel or pointer not found */
#define STDCL_EBUILD   (-9004) /* the OpenCL compiler rejected a program */
#define STDCL_ESTATE   (-9005) /* the object is not in a state for the call */
#define STDCL_ECL      (-9006) /* an OpenCL call failed (see clerror()) */
#define STDCL_EOVERRUN (-9007) /* STDCL_CHECK=1 found memory written out of bounds */
#define STDCL_ESYNC    (-9008) /* STDCL_CHECK=sync,error: a kernel would read a
                                  device copy older than the host's */

/* Message for the last failure in this thread, then NULL until the next
 * failure (like dlerror()).  For a failed build it holds the device, the
 * options and the compiler's log.  The string stays valid until the next
 * clerror() call in the same thread.  Thread safe (thread-local). */
STDCL_API char* clerror(void);

/* Sets the message the next clerror() of this thread returns, for code built
 * on libstdcl that reports its failures the libstdcl way (the CLETE
 * expression templates of <clete.h> say there why they evaluated on the
 * host).  A NULL msg clears any unread message.  Thread safe
 * (thread-local). */
STDCL_API void stdcl_seterror(const char* msg);

/* ------------------------------------------------------------------------ */
/* Default contexts                                                          */
/* ------------------------------------------------------------------------ */

/* A compute context: one cl_context on one platform and one in-order
 * command queue for each of its devices, numbered 0..clgetndev()-1. */
typedef struct stdcl_context CLCONTEXT;
typedef CLCONTEXT CONTEXT;

/* Created when the library loads, released at exit.  NULL when the context
 * type has no device (or was disabled with STDX=0), so `if (stdgpu)` works.
 * stddev: all devices of the platform with the most devices.
 * Environment, X in DEV, CPU, GPU, ACC: STDX=0|1, STDX_PLATFORM_NAME=a,b,..
 * (case-insensitive match on platform name and vendor, in priority order),
 * STDX_MAX_NDEV=n, STDX_LOCK=key (lease devices exclusively among all
 * processes using the same key, e.g. one GPU per MPI rank; a lease is an
 * flock() that ends when the process does, however it ends).
 * STDX_LOCK=auto: the key "auto", and each MPI rank starts at the device of
 * its local rank (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
 * MV2_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID): local rank r of n with d
 * devices takes at most STDX_MAX_NDEV (default d/n, at least 1) devices from
 * device (r * that) mod d on.  When every device is leased the context is
 * NULL: a warning on stderr, the reason in clerror() at the start of main()
 * and in the message of any call given the NULL context.  stdrpu and
 * stdnpu exist for source compatibility and are always NULL. */
STDCL_API extern CLCONTEXT* stddev;
STDCL_API extern CLCONTEXT* stdcpu;
STDCL_API extern CLCONTEXT* stdgpu;
STDCL_API extern CLCONTEXT* stdacc;
STDCL_API extern CLCONTEXT* stdrpu;
STDCL_API extern CLCONTEXT* stdnpu;

/* Does nothing: the contexts exist before main().  Kept for STDCL code. */
STDCL_API void stdcl_init(void);

/* Number of devices in cp; 0 when cp is NULL. */
STDCL_API cl_uint clgetndev(CLCONTEXT* cp);

/* Creates a context beyond the defaults: the devices of type devtype
 * (CL_DEVICE_TYPE_GPU, ..._CPU, ..._ALL) of the first platform matching the
 * comma-separated list platform_names (NULL: the platform with the most such
 * devices), at most max_ndev of them (0: all).  ctxprop_ext (may be NULL):
 * extra cl_context_properties pairs, 0-terminated, added after
 * CL_CONTEXT_PLATFORM (e.g. CL_GL_CONTEXT_KHR for clglmalloc); a
 * CL_CONTEXT_PLATFORM among them is refused.  flags is reserved, pass 0.
 * STDCL 1.6's signature.  Returns NULL when no platform has such a device. */
STDCL_API CLCONTEXT* clcontext_create(const char* platform_names,
                                      cl_device_type devtype, size_t max_ndev,
                                      cl_context_properties* ctxprop_ext,
                                      int flags);

/* Releases a context made by clcontext_create, after waiting for its queues.
 * The default contexts cannot be destroyed (STDCL_EINVAL). */
STDCL_API int clcontext_destroy(CLCONTEXT* cp);

/* clstat(): what a context holds (STDCL 1.6). */
struct clstat_info {
    cl_uint impid; /* 0 for every libstdcl context */
    cl_uint ndev;  /* devices */
    cl_uint nprg;  /* programs open (clopen, clsopen, clload) */
    cl_uint nkrn;  /* kernels clsym has returned from them */
};

/* clgetdevinfo(): one device's properties, from clGetDeviceInfo (STDCL 1.6). */
struct cldev_info {
    cl_device_type dev_type;
    cl_uint dev_vendor_id;
    cl_uint dev_max_core;
    cl_uint dev_max_wi_dim;
    size_t dev_max_wi_sz[4];
    cl_uint dev_max_wi_sz_is_symmetric; /* 1 if every dimension's limit is equal */
    size_t dev_max_wg_sz;
    cl_uint dev_pref_vec_char;
    cl_uint dev_pref_vec_short;
    cl_uint dev_pref_vec_int;
    cl_uint dev_pref_vec_long;
    cl_uint dev_pref_vec_float;
    cl_uint dev_pref_vec_double;
    cl_uint dev_max_freq;
    cl_bitfield dev_addr_bits;
    cl_ulong dev_global_mem_sz;
    cl_ulong dev_max_mem_alloc_sz;
    cl_bool dev_img_sup;
    cl_uint dev_max_img_args_r;
    cl_uint dev_max_img_args_w;
    size_t dev_img2d_max_width;
    size_t dev_img2d_max_height;
    size_t dev_img3d_max_width;
    size_t dev_img3d_max_height;
    size_t dev_img3d_max_depth;
    cl_uint dev_max_samplers;
    size_t dev_max_param_sz;
    cl_uint dev_mem_base_addr_align;
    char dev_name[256];
    char dev_vendor[256];
    char dev_version[256];
    char dev_drv_version[256];
    cl_ulong dev_local_mem_sz;
};

/* Fills *info with cp's counts.  0, or a negative code (NULL cp or info). */
STDCL_API int clstat(CLCONTEXT* cp, struct clstat_info* info);

/* Fills info[0..clgetndev(cp)-1], one entry per device of cp (the caller
 * provides that many).  0, or a negative code. */
STDCL_API int clgetdevinfo(CLCONTEXT* cp, struct cldev_info* info);

/* Prints ndev entries of info to fp, one block per device, as STDCL 1.6
 * did (name, vendor, type, compute units, sizes).  Prints nothing for a
 * NULL fp or info. */
STDCL_API void clfreport_devinfo(FILE* fp, size_t ndev, struct cldev_info* info);

/* One line on how cp was chosen: platform, devices and the environment
 * variables that applied (what stdclinfo prints).  NULL if cp is NULL. */
STDCL_API const char* stdcl_context_why(CLCONTEXT* cp);

/* The alignment, in bytes, of a pointer into a clmalloc allocation given to a
 * kernel (clarg_set_global, clforka) other than the allocation's start: the
 * largest CL_DEVICE_MEM_BASE_ADDR_ALIGN of cp's devices (which OpenCL gives
 * in bits), rounded up to a power of two.  Such a pointer must lie a multiple
 * of it into its allocation; others are refused at the call (STDCL_EINVAL).
 * 0 on a bad argument. */
STDCL_API size_t stdcl_mem_align(CLCONTEXT* cp);

/* The raw OpenCL objects behind a context, for mixing in plain OpenCL calls.
 * They stay owned by libstdcl: do not release them.  NULL on a bad argument. */
STDCL_API cl_platform_id stdcl_platform(CLCONTEXT* cp);
STDCL_API cl_context stdcl_clcontext(CLCONTEXT* cp);
STDCL_API cl_device_id stdcl_device(CLCONTEXT* cp, unsigned int devnum);
STDCL_API cl_command_queue stdcl_queue(CLCONTEXT* cp, unsigned int devnum);

/* ------------------------------------------------------------------------ */
/* Kernel loader                                                             */
/* ------------------------------------------------------------------------ */

#define CLLD_NOW      0x01 /* build at clopen */
#define CLLD_DEFAULT  CLLD_NOW
#define CLLD_LAZY     0x02 /* build at the first clsym */
#define CLLD_NOBUILD  0x04 /* do not build; call clbuild() with options */
#define CLLD_GLOBAL   0x08 /* the kernels are found by clsym(cp, NULL, ...):
                              libstdcl does this for every program; accepted */

/* Opens the OpenCL C source file `file` in cp and builds it for every device
 * of cp (flags 0 means CLLD_NOW).  A relative name is looked up in the
 * current directory, then in each directory of STDCL_KERNEL_PATH
 * (colon-separated).  Builds get -D __STDCL__, -D __GPU__ or -D __CPU__,
 * a vendor macro (__NVIDIA__, __AMD__, __INTEL__, __POCL__, ...),
 * -I <file's directory>, -I <current directory>, then STDCL_BUILD_OPTIONS.
 * Opening the same content with the same options again returns the same
 * handle with its count raised.  Returns a handle, or NULL (missing file,
 * build error: clerror() holds the compiler's log). */
STDCL_API void* clopen(CLCONTEXT* cp, const char* file, int flags);

/* As clopen, with the program's source text instead of a file. */
STDCL_API void* clsopen(CLCONTEXT* cp, const char* source, int flags);

/* As clsopen, with a name for the text: messages say `name`, and the
 * compiler's log gives `name` and line numbers in it (the text is built
 * with a `#line 1 "name"` line before it).  name must be non-empty, with
 * no '"', '\\' or newline (STDCL_EINVAL). */
STDCL_API void* clsopen_named(CLCONTEXT* cp, const char* source,
                              const char* name, int flags);

/* As clopen and clsopen, built with `options` (e.g. "-D N=64
 * -cl-fast-relaxed-math") where clbuild puts its options: after the standard
 * ones, before STDCL_BUILD_OPTIONS; no CLLD_NOBUILD and clbuild needed.  NULL
 * or "" options: none (clopen, clsopen).  The options are part of what is
 * opened: the same text with other options is another handle, and another
 * program cache entry (the same text and options is the same handle, as
 * clopen's reuse).  With CLLD_LAZY the options are kept for the build at the
 * first clsym.  With CLLD_NOBUILD, options are refused (STDCL_EINVAL: give
 * them to clbuild).  Returns a handle, or NULL (as clopen; a build that
 * fails, options the compiler rejects included: clerror() holds the device,
 * the options and the compiler's log). */
STDCL_API void* clopen_opt(CLCONTEXT* cp, const char* file,
                           const char* options, int flags);
STDCL_API void* clsopen_opt(CLCONTEXT* cp, const char* source,
                            const char* options, int flags);

/* Builds a handle opened with CLLD_NOBUILD, adding `options` to the standard
 * ones.  Returns the handle, or NULL (with the compiler's log in clerror()).
 * A handle not opened with CLLD_NOBUILD, or already built: NULL. */
STDCL_API void* clbuild(CLCONTEXT* cp, void* handle, const char* options,
                        int flags);

/* The kernel `name` of the program `handle` (NULL: search every program
 * open in cp).  The same (handle, name) gives the same cl_kernel, owned by
 * libstdcl until the handle is closed.  NULL if there is no such kernel. */
STDCL_API cl_kernel clsym(CLCONTEXT* cp, void* handle, const char* name,
                          int flags);

/* Registers an OpenCL C program embedded in an executable or library (the
 * object files made by the clcc tool call this from a constructor, which may
 * run before libstdcl's own).  name identifies it in messages; the source is
 * copied; registering the same name and text twice keeps one copy.
 * clopen(cp, NULL, flags) opens every registered program and
 * clsym(cp, NULL, name, flags) finds kernels among them.
 * Returns 0, or STDCL_EINVAL for a NULL source. */
STDCL_API int stdcl_embed_register(const char* name, const char* source,
                                   size_t size);

/* clsopen with source text of len bytes at ptr (no terminating NUL
 * needed), STDCL 1.6's clload.  NULL for a NULL ptr or a len of 0. */
STDCL_API void* clload(CLCONTEXT* cp, void* ptr, size_t len, int flags);

/* Opens a program from device binaries: bin[i] (bin_sz[i] bytes) for device
 * i of cp, nbin = clgetndev(cp), as clGetProgramInfo(CL_PROGRAM_BINARIES)
 * gives them.  Built at once unless CLLD_NOBUILD.  A handle, or NULL. */
STDCL_API void* clloadb(CLCONTEXT* cp, int nbin, char** bin, size_t* bin_sz,
                        int flags);

/* Lowers the handle's count; at zero releases the program and its kernels.
 * Returns 0, or a negative code for an unknown handle. */
STDCL_API int clclose(CLCONTEXT* cp, void* handle);

/* The compiler's log of a built handle on device devnum: warnings of a
 * build that succeeded ("" when the compiler said nothing).  A program
 * cache hit gives the log of the build that was stored.  A handle of
 * several units (the embedded kernels) gives each non-empty log after a
 * line naming its unit.  The string belongs to the handle (valid until it
 * is closed).  NULL for a bad cp, handle or devnum, or a handle not built
 * yet (STDCL_ESTATE).  STDCL_TRACE=log prints each non-empty log when a
 * program is built.  Thread safe. */
STDCL_API const char* clbuildlog(CLCONTEXT* cp, void* handle,
                                 unsigned int devnum);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/* clmalloc flags. */
#define CL_MEM_RW        0x0100 /* read and written by kernels (default) */
#define CL_MEM_RO        0x0200 /* only read by kernels */
#define CL_MEM_WO        0x0400 /* only written by kernels */
#define CL_MEM_DETACHED  0x0800 /* no context yet (cp must be 0) */
#define CL_MEM_NOCOPY    0x1000 /* devices use host memory directly */
#define CL_MEM_IMAGE2D   0x2000 /* an image; set its shape with clmctl */
#define CL_MEM_NOFORCE   0x4000 /* clmsync: skip a transfer that would
                                   move nothing new (STDCL_CHECK=sync, or
                                   after CL_MCTL_MARK_CLEAN; clmsync(3)) */
#define CL_MEM_DEVONLY   0x8000 /* memory on the devices only: the address
                                   is unique but not dereferenceable; for
                                   kernels and clmcopy, not clmsync */
#define CL_MEM_ZERO      0x00010000 /* the host memory and every device copy
                                   start as zeros (as calloc) */

/* clglmalloc kinds (exactly one) and clglmsync directions. */
#define CL_MEM_CLBUF     0x00100000 /* clglmsync: GL object -> host memory */
#define CL_MEM_GLBUF     0x00200000 /* a GL buffer; clglmsync: host -> GL */
#define CL_MEM_GLTEX2D   0x02000000 /* a GL 2D texture */
#define CL_MEM_GLTEX3D   0x04000000 /* a GL 3D texture */
#define CL_MEM_GLRBUF    0x08000000 /* a GL renderbuffer */

/* clmsync directions: exactly one. */
#define CL_MEM_HOST      0x0010 /* device devnum -> host */
#define CL_MEM_DEVICE    0x0020 /* host -> device devnum */

/* Event flags of clmsync, clmcopy, clfork, clforka, clwait. */
#define CL_EVENT_WAIT       0x0001 /* block until done (the default) */
#define CL_EVENT_NOWAIT     0x0002 /* return at once; clwait() joins */
#define CL_EVENT_RELEASE    0x0004 /* the library releases the event (default) */
#define CL_EVENT_NORELEASE  0x0008 /* the caller owns and releases the event */
/* clfork, clforka, stdcl_forkv, stdcl_forkt with CL_EVENT_NOWAIT: enqueue the
 * kernel without an event, as a raw stream of launches does.  The call
 * returns STDCL_LAUNCHED (not an event) on success, NULL on failure;
 * clwait(cp, devnum, CL_KERNEL_EVENT) joins the launch, and clfree and later
 * commands are ordered after it as after any other.  Launches are flushed
 * to the device at most every 200 us: clflush() starts the last ones of a
 * burst at once.  Not with CL_EVENT_WAIT or CL_EVENT_NORELEASE.  A launch
 * waited for without CL_EVENT_NORELEASE returns STDCL_LAUNCHED too. */
#define CL_EVENT_NOEVENT    0x0040
#define STDCL_LAUNCHED      ((cl_event)(size_t)1)

/* clwait selections. */
#define CL_KERNEL_EVENT  0x0100
#define CL_MEM_EVENT     0x0200
#define CL_ALL_EVENT     (CL_KERNEL_EVENT | CL_MEM_EVENT)

/* clmctl operations. */
#define CL_MCTL_GET_STATUS    1 /* returns the allocation's clmalloc flags */
#define CL_MCTL_GET_DEVNUM    2 /* reserved; returns STDCL_EINVAL */
#define CL_MCTL_SET_DEVNUM    3 /* reserved; returns STDCL_EINVAL */
#define CL_MCTL_MARK_CLEAN    4 /* the host copy is unchanged since its last
                                   sync (for CL_MEM_NOFORCE); returns 0 */
#define CL_MCTL_SET_IMAGE2D   5 /* args: size_t w, size_t h,
                                   const cl_image_format* (NULL: RGBA float):
                                   makes the allocation a w x h image */
#define CL_MCTL_SET_USRFLAGS  6 /* args: int flags (detached only) */
#define CL_MCTL_CLR_USRFLAGS  7 /* args: int flags (detached only) */

/* Allocates `size` bytes of host memory (not cleared) that C code uses like
 * malloc() memory and kernels use as __global memory in cp's devices.  Each
 * device holds its own copy, made consistent with clmsync() (on devices
 * that share host memory the copy is the host memory itself).  Allocations
 * of a page or more are page aligned; smaller ones share pages, aligned to
 * stdcl_mem_align(cp) (at least 128 bytes), and cost their size rounded up
 * to it.  With CL_MEM_DEVONLY the memory exists only on the devices (no
 * host memory): the pointer names it in kernel arguments, clmcopy and
 * stdcl_mem, and clmsync refuses it.  NULL for size 0, for more than a
 * device can allocate, or without memory. */
STDCL_API void* clmalloc(CLCONTEXT* cp, size_t size, int flags);

/* Registers `size` bytes at ptr, memory the program owns (malloc, a static
 * array, a mapping), so that libstdcl calls take it as they take clmalloc
 * memory: kernel arguments, clmsync, clmcopy.  Devices that share host
 * memory use it in place when ptr is aligned to stdcl_mem_align(cp);
 * otherwise each device holds a copy made consistent with clmsync.  flags:
 * CL_MEM_RW, CL_MEM_RO, CL_MEM_WO, CL_MEM_NOCOPY, CL_MEM_DETACHED.  The
 * program keeps the memory: clfree(ptr) unregisters it (after its pending
 * commands) without freeing it, and the program frees it after that.
 * Returns 0, or STDCL_EINVAL (NULL, size 0, other flags, a range that meets
 * memory already registered). */
STDCL_API int clmadopt(CLCONTEXT* cp, void* ptr, size_t size, int flags);

/* Resizes an allocation, keeping min(old, new) bytes of host contents.
 * Returns the new pointer (the old one is freed) or NULL (old unchanged). */
STDCL_API void* clmrealloc(CLCONTEXT* cp, void* ptr, size_t size, int flags);

/* Frees a clmalloc allocation after its pending transfers and kernels
 * (clmadopt memory: unregisters it).
 * NULL: no-op, returns 0.  A pointer not returned by clmalloc (foreign,
 * already freed, or interior): returns STDCL_ENOENT and touches nothing. */
STDCL_API int clfree(void* ptr);

/* Size in bytes of the allocation that ptr starts; 0 if ptr is not one. */
STDCL_API size_t clsizeofmem(void* ptr);

/* The start of the clmalloc allocation that contains ptr (any address inside
 * it), and in *offset (if not NULL) ptr's offset from it; NULL if ptr is in
 * no allocation.  Constant time in the number of live allocations. */
STDCL_API void* stdcl_mem_base(const void* ptr, size_t* offset);

/* The start of the clmalloc allocation that contains ptr (STDCL 1.6's name
 * for stdcl_mem_base(ptr, NULL)); NULL if ptr is in none.  cp is not used
 * (any allocation is found). */
STDCL_API void* clmemptr(CLCONTEXT* cp, void* ptr);

/* Attaches a detached allocation to cp / detaches it.  0 or negative. */
STDCL_API int clmattach(CLCONTEXT* cp, void* ptr);
STDCL_API int clmdetach(void* ptr);

/* Controls an allocation (CL_MCTL_*).  Returns >= 0 or a negative code. */
STDCL_API int clmctl(void* ptr, int op, ...);
STDCL_API int clmctl_va(void* ptr, int op, va_list ap);

/* Copies between host memory and device devnum's copy of the allocation
 * that contains ptr: CL_MEM_DEVICE (host to device) or CL_MEM_HOST (device
 * to host), exactly one, plus event flags.  Returns the event (owned by the
 * library unless CL_EVENT_NORELEASE), or NULL on failure. */
STDCL_API cl_event clmsync(CLCONTEXT* cp, unsigned int devnum, void* ptr,
                           int flags);

/* As clmsync, for the nbytes bytes from ptr on only (ptr may point anywhere
 * inside an allocation): devices can each bring back their own slice of
 * one array.  nbytes must be > 0 and ptr + nbytes must not pass the end of
 * the allocation (STDCL_EINVAL, saying by how much); an image allocation
 * is synced whole (nbytes must then cover it from its start).  No
 * alignment is required of ptr or nbytes. */
STDCL_API cl_event clmsyncn(CLCONTEXT* cp, unsigned int devnum, void* ptr,
                            size_t nbytes, int flags);

/* Copies src's device copy to dst's on device devnum (sizes: the smaller). */
STDCL_API cl_event clmcopy(CLCONTEXT* cp, unsigned int devnum, void* src,
                           void* dst, int flags);

/* Host memory shared with an OpenGL object (buffer, 2D or 3D texture,
 * renderbuffer: flags holds exactly one of CL_MEM_GLBUF, CL_MEM_GLTEX2D,
 * CL_MEM_GLTEX3D, CL_MEM_GLRBUF), its size the object's.  Needs a context
 * made by clcontext_create with a GL context in ctxprop_ext on a platform
 * with cl_khr_gl_sharing; elsewhere NULL, and clerror() says the platform
 * has no GL sharing.  Free it with clfree. */
STDCL_API void* clglmalloc(CLCONTEXT* cp, cl_GLuint glbufobj, cl_GLenum target,
                           cl_GLint miplevel, int flags);

/* Copies between a clglmalloc allocation's host memory and its GL object
 * through device devnum: CL_MEM_GLBUF (host to GL) or CL_MEM_CLBUF (GL to
 * host), plus event flags.  Returns the event as clmsync does, or NULL. */
STDCL_API cl_event clglmsync(CLCONTEXT* cp, unsigned int devnum, void* ptr,
                             int flags);

/* The cl_mem holding device devnum's copy of ptr's allocation (created if
 * needed; a sub-buffer for an interior pointer).  Owned by libstdcl. */
STDCL_API cl_mem stdcl_mem(CLCONTEXT* cp, unsigned int devnum, void* ptr);

/* Foreign commands: plain OpenCL commands (a kernel of the program's own,
 * CLBlast, clFFT) on libstdcl memory, announced so that libstdcl orders
 * them like its own (see clforeign_begin(3)).  A command enqueued on
 * stdcl_queue(cp, d) needs no announcement to keep its order; one on
 * another queue does, and an announced write also tells clfree, CL_MEM_NOFORCE
 * and STDCL_CHECK=sync that the device's copy changed. */

/* One allocation a foreign command uses: ptr anywhere in it, access, one
 * of CL_MEM_RO (read), CL_MEM_WO (written) and CL_MEM_RW (read and
 * written), and size, the bytes used from ptr (0: to the allocation's end).
 * Commands are ordered by whole allocation; size narrows what the sync
 * check takes as read and written (a device's part of a split array). */
struct clforeign_use {
    void* ptr;
    int access;
    size_t size;
};

/* clforeign_begin flag: hand the events to wait for to the program
 * (clforeign_waitlist) instead of enqueuing a barrier on the queue. */
#define CL_FOREIGN_WAITLIST 0x1

typedef struct stdcl_foreign CLFOREIGN;

/* Begins foreign commands on device devnum of cp, enqueued on queue (a
 * queue of cp's OpenCL context on that device; NULL: the device's kernel
 * queue, the one stdcl_queue returns, without moving the transfers onto it
 * as stdcl_queue does), that use the nuses allocations of uses.  They will
 * run after every libstdcl command issued before on those allocations on
 * that device: a barrier on queue waits for them, or, with
 * CL_FOREIGN_WAITLIST, clforeign_waitlist gives the events for the
 * commands' own wait lists.  Returns the ticket that clforeign_end takes,
 * or NULL (clerror() says why; nothing changed).  Until clforeign_end,
 * clfree, clmrealloc and clmdetach of those allocations are refused
 * (STDCL_ESTATE). */
STDCL_API CLFOREIGN* clforeign_begin(CLCONTEXT* cp, unsigned int devnum, cl_command_queue queue,
                                     const struct clforeign_use* uses, size_t nuses, int flags);

/* The queue of ticket f (the one given, or the kernel queue for NULL); NULL
 * for NULL. */
STDCL_API cl_command_queue clforeign_queue(const CLFOREIGN* f);

/* With CL_FOREIGN_WAITLIST: the number of events the foreign commands must
 * wait for, and in *list (if not NULL) the events, valid until
 * clforeign_end.  0 (and NULL) when there are none or without the flag. */
STDCL_API cl_uint clforeign_waitlist(const CLFOREIGN* f, const cl_event** list);

/* Ends ticket f: the foreign commands are the nevents events given (of cp's
 * OpenCL context), or, when nevents is 0, everything enqueued on the
 * ticket's queue so far (a marker).  libstdcl's later commands on the
 * allocations wait for them, clfree waits for them, and the copies on the
 * ticket's device of the allocations written (CL_MEM_WO, CL_MEM_RW) count
 * as changed.  Returns 0 and frees f, or a negative code and keeps f open
 * (bad events: nothing changed; call again). */
STDCL_API int clforeign_end(CLFOREIGN* f, cl_uint nevents, const cl_event* events);

/* Interior pointers.  A kernel argument may be a pointer inside an
 * allocation (clarg_set, clforka): the kernel sees the memory from there
 * on, through an OpenCL sub-buffer, whose origin must be a multiple of
 * every device's CL_DEVICE_MEM_BASE_ADDR_ALIGN (128 bytes on most GPUs
 * and on PoCL): an interior pointer that is not gets a clear error at
 * clfork.  To split an array at any element, pass the allocation itself
 * and an element offset, or launch with a global offset (below).
 * clmsync, clmsyncn and stdcl_mem_base take any interior pointer. */

/* ------------------------------------------------------------------------ */
/* Launch                                                                    */
/* ------------------------------------------------------------------------ */

/* An index space: dimensions, global offset, global size and local size.
 *
 * A local size of 0 in a dimension: clfork, clforka and clndrange_fit
 * choose it, deterministically, and write it back into ltsz.  Dimensions
 * with a size given keep it.  The group may hold at most the kernel's
 * CL_KERNEL_WORK_GROUP_SIZE work-items (at most the device's limit) and at
 * most CL_DEVICE_MAX_WORK_ITEM_SIZES[d] in dimension d.  Dimension 0 gets
 * the largest size that divides its global size, fits those limits and is
 * a multiple of the kernel's CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE;
 * if no such size exists, the largest size that divides and fits.  Each
 * further dimension gets the largest size that divides its global size
 * and fits what the dimensions before it left.  When the group's __local
 * arguments (CLLOCAL_PER_ITEM, CLLOCAL_FN) then need more than the
 * device's CL_DEVICE_LOCAL_MEM_SIZE, the search is repeated with at most
 * half as many work-items, down to one.  A prime global size gets 1: pad
 * the global size (and test get_global_id in the kernel) for larger
 * groups.  The limits of each (kernel, device) are queried once.
 *
 * STDCL_LOCAL_SIZE_DRIVER in ltsz[0]: the driver chooses the local size, in
 * every dimension (clfork, clforka and stdcl_forkv enqueue with a NULL local
 * size; a kernel compiled with reqd_work_group_size gets that size, which
 * OpenCL requires).  ltsz[1..dim-1] must then be 0 or
 * STDCL_LOCAL_SIZE_DRIVER, and STDCL_LOCAL_SIZE_DRIVER in another dimension
 * without it in ltsz[0] is an error.  ltsz is not written back (the driver
 * does not say what it chose).  A __local argument sized per work-item or by
 * a function (CLLOCAL_PER_ITEM, CLLOCAL_FN) cannot be sized without a known
 * group: such a launch is refused (STDCL_EINVAL); CLLOCAL sizes are fine.
 * clndrange_fit makes the same checks and leaves ndr unchanged.
 *
 * A global offset (gtoff) shifts get_global_id by it; get_global_offset(d)
 * returns it in the kernel.  To split one range over devices, give each
 * device a slice: ndr.gtoff[0] = first index, ndr.gtsz[0] = count, with the
 * same arguments; the kernel indexes the full arrays with get_global_id,
 * and each device brings back its slice with clmsyncn. */
typedef struct {
    size_t dim;
    size_t gtoff[4];
    size_t gtsz[4];
    size_t ltsz[4];
} clndrange_t;

/* The local size that lets the driver choose (ltsz[0]; see above). */
#define STDCL_LOCAL_SIZE_DRIVER ((size_t)-1)

/* Initialisers: clndrange_t ndr = clndrange_init1d(0, n, 64); */
#define STDCL_SZ(x) ((size_t)(x))
#define clndrange_init1d(o0, g0, l0) \
    { 1, { STDCL_SZ(o0), 0, 0, 0 }, { STDCL_SZ(g0), 1, 1, 1 }, { STDCL_SZ(l0), 1, 1, 1 } }
#define clndrange_init2d(o0, g0, l0, o1, g1, l1) \
    { 2, { STDCL_SZ(o0), STDCL_SZ(o1), 0, 0 }, { STDCL_SZ(g0), STDCL_SZ(g1), 1, 1 }, \
      { STDCL_SZ(l0), STDCL_SZ(l1), 1, 1 } }
#define clndrange_init3d(o0, g0, l0, o1, g1, l1, o2, g2, l2) \
    { 3, { STDCL_SZ(o0), STDCL_SZ(o1), STDCL_SZ(o2), 0 }, \
      { STDCL_SZ(g0), STDCL_SZ(g1), STDCL_SZ(g2), 1 }, \
      { STDCL_SZ(l0), STDCL_SZ(l1), STDCL_SZ(l2), 1 } }

#define clndrange_init4d(o0, g0, l0, o1, g1, l1, o2, g2, l2, o3, g3, l3) \
    { 4, { STDCL_SZ(o0), STDCL_SZ(o1), STDCL_SZ(o2), STDCL_SZ(o3) }, \
      { STDCL_SZ(g0), STDCL_SZ(g1), STDCL_SZ(g2), STDCL_SZ(g3) }, \
      { STDCL_SZ(l0), STDCL_SZ(l1), STDCL_SZ(l2), STDCL_SZ(l3) } }

/* Assignments: clndrange_set1d(ndr, 0, n, 64); (ndr is a clndrange_t) */
#define clndrange_set1d(ndr, o0, g0, l0) \
    stdcl_ndrange_set(&(ndr), 1, (o0), (g0), (l0), 0, 1, 1, 0, 1, 1)
#define clndrange_set2d(ndr, o0, g0, l0, o1, g1, l1) \
    stdcl_ndrange_set(&(ndr), 2, (o0), (g0), (l0), (o1), (g1), (l1), 0, 1, 1)
#define clndrange_set3d(ndr, o0, g0, l0, o1, g1, l1, o2, g2, l2) \
    stdcl_ndrange_set(&(ndr), 3, (o0), (g0), (l0), (o1), (g1), (l1), (o2), \
                      (g2), (l2))
#define clndrange_set4d(ndr, o0, g0, l0, o1, g1, l1, o2, g2, l2, o3, g3, l3) \
    stdcl_ndrange_set4(&(ndr), (o0), (g0), (l0), (o1), (g1), (l1), (o2), \
                       (g2), (l2), (o3), (g3), (l3))
STDCL_API void stdcl_ndrange_set4(clndrange_t* ndr, size_t o0, size_t g0,
                                  size_t l0, size_t o1, size_t g1, size_t l1,
                                  size_t o2, size_t g2, size_t l2, size_t o3,
                                  size_t g3, size_t l3);
STDCL_API void stdcl_ndrange_set(clndrange_t* ndr, size_t dim, size_t o0,
                                 size_t g0, size_t l0, size_t o1, size_t g1,
                                 size_t l1, size_t o2, size_t g2, size_t l2);

/* Kernel arguments.  cp may be NULL (the kernel's own context is used).
 * stdcl_arg_set: argument argnum by value (size bytes at value); if the
 *   kernel's argument is a __global pointer and value holds a clmalloc
 *   pointer, that allocation is bound as with stdcl_arg_set_global.
 * stdcl_arg_set_local: argnum gets size bytes of __local memory.
 * stdcl_arg_set_global: argnum gets the allocation that contains ptr (an
 *   interior pointer addresses the kernel's view from ptr on), bound per
 *   device at each clfork.
 * All return 0 or a negative code (clerror() says which argument and why).
 * Use the clarg_set* forms below, with 3 (no cp) or 4 arguments. */
STDCL_API int stdcl_arg_set(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum,
                            size_t size, const void* value);
STDCL_API int stdcl_arg_set_local(CLCONTEXT* cp, cl_kernel krn,
                                  unsigned int argnum, size_t size);
STDCL_API int stdcl_arg_set_global(CLCONTEXT* cp, cl_kernel krn,
                                   unsigned int argnum, const void* ptr);

/* Enqueues krn over ndr on device devnum of cp, with the arguments set so
 * far.  CL_EVENT_WAIT (default) blocks; CL_EVENT_NOWAIT returns at once and
 * clwait(cp, devnum, CL_KERNEL_EVENT) joins.  Returns the event (owned by
 * the library unless CL_EVENT_NORELEASE) or NULL on failure (bad devnum,
 * NULL kernel, global size not a multiple of the local size, an argument
 * not set, ...). */
STDCL_API cl_event clfork(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn,
                          clndrange_t* ndr, int flags);

/* Fills the 0 entries of ndr->ltsz with the local sizes clfork would choose
 * for krn on device devnum (see clndrange_t), without launching, counting
 * the __local arguments set so far.  Returns 0, or a negative code (bad
 * arguments, a given local size over the limits, no group size that fits
 * the __local memory) with ndr unchanged.  With STDCL_LOCAL_SIZE_DRIVER in
 * ltsz[0] it makes clfork's checks and leaves ndr unchanged.  Thread
 * safe. */
STDCL_API int clndrange_fit(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn,
                            clndrange_t* ndr);

/* stdcl_kernel_limits(): what a kernel allows on one device. */
struct stdcl_kernel_limits {
    size_t work_group_size;      /* CL_KERNEL_WORK_GROUP_SIZE: the most
                                    work-items in a group (at most the
                                    device's CL_DEVICE_MAX_WORK_GROUP_SIZE) */
    size_t group_size_multiple;  /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
                                    (1 when the driver gives none) */
    cl_ulong local_mem_size;     /* CL_KERNEL_LOCAL_MEM_SIZE: __local bytes
                                    the kernel uses with its arguments as
                                    they are set (see below) */
    cl_ulong private_mem_size;   /* CL_KERNEL_PRIVATE_MEM_SIZE: private
                                    bytes per work-item */
    size_t reqd_work_group_size[3]; /* CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
                                    reqd_work_group_size(x, y, z), or 0s */
    size_t max_work_item_sizes[3]; /* the device's
                                    CL_DEVICE_MAX_WORK_ITEM_SIZES[0..2] */
    cl_ulong device_local_mem_size; /* the device's CL_DEVICE_LOCAL_MEM_SIZE */
};

/* Fills *out with the limits of krn (from clsym on a program open in cp) on
 * device devnum of cp, the ones clfork's choice of local sizes uses (see
 * clndrange_t).  The kernel's and device's limits are queried once per
 * (kernel, device) and kept; local_mem_size and private_mem_size are asked
 * of the driver at each call: local_mem_size counts the kernel's __local
 * variables and each __local argument as last set on the device's kernel
 * object (CLLOCAL or clarg_set_local: its size; CLLOCAL_PER_ITEM and
 * CLLOCAL_FN: the size of the last launch on a device of this type; not
 * set: 0).  Returns 0, or a negative code with *out unchanged: STDCL_EINVAL
 * (bad cp or devnum, NULL krn or out, a kernel of another context or not
 * made by clsym), STDCL_ESTATE (the kernel's program was closed).  Thread
 * safe. */
STDCL_API int stdcl_kernel_limits(CLCONTEXT* cp, unsigned int devnum,
                                  cl_kernel krn,
                                  struct stdcl_kernel_limits* out);

/* __local arguments sized at launch.  Pass one of these markers as the
 * value of a __local argument to clarg_set or clforka (any position):
 *   CLLOCAL(bytes)           bytes for the whole group
 *   CLLOCAL_PER_ITEM(bytes)  bytes per work-item, times the group's size
 *   CLLOCAL_FN(fn, user)     fn(local, dim, user) bytes, called at each
 *                            launch with the resolved local sizes
 * e.g. clforka(cp, 0, krn, &ndr, 0, pos, CLLOCAL_PER_ITEM(16), n).  A
 * marker given for an argument that is not __local, 0 bytes, or a size
 * over CL_DEVICE_LOCAL_MEM_SIZE is an error (STDCL_EINVAL).  The marker
 * holds a tag that libstdcl checks; build it only with these macros. */
typedef size_t (*stdcl_local_fn)(const size_t* local, size_t dim, void* user);
typedef struct {
    unsigned long long tag;   /* STDCL_LOCAL_TAG */
    size_t bytes;             /* CLLOCAL */
    size_t per_item;          /* CLLOCAL_PER_ITEM */
    stdcl_local_fn fn;        /* CLLOCAL_FN */
    void* user;
} stdcl_local_t;
#define STDCL_LOCAL_TAG 0x4c41434f4c4c4353ULL /* "SCLLOCAL" */
static inline stdcl_local_t stdcl_local_make(size_t bytes, size_t per_item,
                                             stdcl_local_fn fn, void* user)
{
    stdcl_local_t m;
    m.tag = STDCL_LOCAL_TAG;
    m.bytes = bytes;
    m.per_item = per_item;
    m.fn = fn;
    m.user = user;
    return m;
}
#define CLLOCAL(bytes) stdcl_local_make(STDCL_SZ(bytes), 0, 0, 0)
#define CLLOCAL_PER_ITEM(bytes) stdcl_local_make(0, STDCL_SZ(bytes), 0, 0)
#define CLLOCAL_FN(fn, user) stdcl_local_make(0, 0, (fn), (user))

/* The C type of a value given for a kernel argument (stdcl_arg_sett,
 * stdcl_forkt, stdcl_forktv): what lets the library convert it to the
 * parameter's declared type.  The header's forms (clarg_set, clforka) pass
 * it; STDCL_TYPE_UNKNOWN checks the size only. */
#define STDCL_TYPE_UNKNOWN 0
#define STDCL_TYPE_INT     1 /* a signed integer (char, short, int, long...) */
#define STDCL_TYPE_UINT    2 /* an unsigned integer (size_t, cl_uint, _Bool) */
#define STDCL_TYPE_FLOAT   3 /* float, double, long double */
#define STDCL_TYPE_POINTER 4 /* any pointer (an array decays to one) */
#define STDCL_TYPE_OTHER   5 /* a struct, union or vector (cl_float4...) */

/* stdcl_arg_set with the value's type (a STDCL_TYPE_*): an arithmetic value
 * of another arithmetic type than the parameter's (typedefs resolved from the
 * program's source) is converted as C converts an argument to a prototyped
 * parameter; a pointer for a scalar, a scalar for a pointer (but 0), or a
 * struct or vector of another size is refused (STDCL_EINVAL, naming the
 * argument and both types). */
STDCL_API int stdcl_arg_sett(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum,
                             size_t size, int type, const void* value);

/* clforka's engines: set arguments 0..nargs-1 (each as stdcl_arg_set), then
 * clfork.  stdcl_forka takes nargs pairs (size_t size, const void* value)
 * after nargs; stdcl_forkv takes them as two arrays.  stdcl_forkt takes
 * triples (size_t size, int type, const void* value) and stdcl_forktv three
 * arrays, each value set as stdcl_arg_sett.  Use clforka(). */
STDCL_API cl_event stdcl_forka(CLCONTEXT* cp, unsigned int devnum,
                               cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, ...);
STDCL_API cl_event stdcl_forkv(CLCONTEXT* cp, unsigned int devnum,
                               cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, const size_t* sizes,
                               const void* const* values);
STDCL_API cl_event stdcl_forkt(CLCONTEXT* cp, unsigned int devnum,
                               cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, ...);
STDCL_API cl_event stdcl_forktv(CLCONTEXT* cp, unsigned int devnum,
                                cl_kernel krn, clndrange_t* ndr, int flags,
                                int nargs, const size_t* sizes,
                                const int* types, const void* const* values);

/* ------------------------------------------------------------------------ */
/* Synchronisation                                                           */
/* ------------------------------------------------------------------------ */

/* devnum CL_ALL_DEVICES (defined below): clflush, clwait and stdcl_wait act
 * on every device of cp; clmsync, clmsyncn (CL_MEM_DEVICE only: CL_MEM_HOST
 * from every device is refused) and clmcopy enqueue on every device before
 * waiting for any (not with CL_EVENT_NORELEASE). */

/* Submits device devnum's queued commands without waiting.  0 or negative. */
STDCL_API int clflush(CLCONTEXT* cp, unsigned int devnum, int flags);

/* Blocks until device devnum's tracked events of the selected kinds
 * (CL_KERNEL_EVENT, CL_MEM_EVENT, CL_ALL_EVENT; 0 means all) complete, and
 * releases them; with CL_EVENT_NORELEASE they stay tracked (valid) until a
 * later wait without it.  Returns 0 or a negative code (an event that
 * failed). */
STDCL_API int stdcl_wait(CLCONTEXT* cp, unsigned int devnum, int flags);

/* stdcl_wait with STDCL 1.6's return type: the last of the events it joined
 * (a kernel's when CL_KERNEL_EVENT was selected and one was pending, else
 * the last transfer's), or a completed event when none was pending; owned by
 * the library (do not release it), valid until the next clwait on the same
 * device.  NULL on failure (clerror() says why). */
STDCL_API cl_event clwait(CLCONTEXT* cp, unsigned int devnum, int flags);

/* Blocks until ev completes and releases it unless CL_EVENT_NORELEASE (for
 * an event handed over with CL_EVENT_NORELEASE).  Returns ev, or NULL when
 * ev is NULL or failed.  devnum must be a device of cp. */
STDCL_API cl_event clwaitev(CLCONTEXT* cp, unsigned int devnum, const cl_event ev,
                            int flags);

/* ------------------------------------------------------------------------ */
/* Event times and reductions                                                */
/* ------------------------------------------------------------------------ */

/* Command queues profile when the environment has STDCL_PROFILE=1 when the
 * library loads (or when a context is created); COPRTHR_OPENCL_PROFILING_ENABLE
 * (any value but "" and "0") is an alias.  Off by default: profiling costs
 * a little on some drivers.
 *
 * clevent_times: the device's start and end times of a completed command
 * (an event from clfork, clforka, clmsync... kept with CL_EVENT_NORELEASE,
 * or any cl_event), in nanoseconds; end - start is its duration.  start or
 * end may be NULL.  Returns 0, or STDCL_EINVAL (NULL or invalid event),
 * STDCL_ESTATE (the command has not completed, or its queue does not
 * profile: the message says to set STDCL_PROFILE=1). */
STDCL_API int clevent_times(cl_event ev, cl_ulong* start, cl_ulong* end);

/* With STDCL_TIMELINE=FILE in the environment when the library loads, the
 * library keeps a timeline of the process (every device queue's commands,
 * every thread's waits and program builds: stdcl(7)) and writes it to FILE
 * at exit.  stdcl_timeline_flush writes it now, with the commands seen
 * complete so far (it does not wait for the others), so that a program
 * that runs for hours, or one that may not exit normally, leaves a
 * timeline behind; each call writes the whole timeline again.  The file
 * is replaced whole (written beside it and renamed).  Returns 0, or
 * STDCL_ESTATE (STDCL_TIMELINE is unset, or the process is a child of
 * fork() and FILE has no %p), STDCL_ENOENT (the file could not be written:
 * clerror() says why), STDCL_ENOMEM. */
STDCL_API int stdcl_timeline_flush(void);

/* clreduce operations and element types. */
#define CL_REDUCE_SUM    1
#define CL_REDUCE_MIN    2
#define CL_REDUCE_MAX    3
#define CL_REDUCE_FLOAT  1 /* float */
#define CL_REDUCE_DOUBLE 2 /* double: the devices a call uses need fp64 */
#define CL_REDUCE_INT    3 /* int (cl_int) */
#define CL_REDUCE_LONG   4 /* long (cl_long) */
#define CL_REDUCE_UINT   5 /* unsigned int (cl_uint) */
#define CL_REDUCE_ULONG  6 /* unsigned long (cl_ulong) */
/* clsort and clsort_by_key: largest first (ties keep their order). */
#define CL_SORT_DESCENDING 0x1000
/* clscan: out[i] combines in[0] .. in[i - 1] (out[0] is the operation's
 * identity); without it, in[0] .. in[i]. */
#define CL_SCAN_EXCLUSIVE  0x2000
/* devnum for "every device of the context". */
#define CL_ALL_DEVICES   ((unsigned int)-1)

/* Reduces the n elements at ptr (a clmalloc pointer, or one inside an
 * allocation, aligned to the element) with op (CL_REDUCE_SUM, _MIN, _MAX)
 * and writes the result, of the element type, to *result.  devnum: one
 * device, or CL_ALL_DEVICES (each device reduces an equal slice of its
 * own copy).  The devices read their copies: clmsync (or clmsyncn) the
 * data to them first.  The layout follows the device type: each work-item
 * sums a contiguous chunk on a CPU, consecutive work-items read
 * consecutive elements on a GPU.  The kernels are built once per context
 * (at the first call of each element type).  An int or long sum wraps
 * around on overflow; a float or double sum is a tree of partial sums (it
 * may differ from a sequential sum by rounding); float and double MIN and
 * MAX skip NaNs, as fmin and fmax do.  Returns 0, or
 * STDCL_EINVAL (bad type, op, n == 0, NULL result, ptr + n elements past
 * the end of the allocation), STDCL_ENOENT (ptr not from clmalloc),
 * STDCL_ESTATE (double, on a device the call uses that has no fp64), or an
 * OpenCL failure.  Calls on one context are serialized; thread safe. */
STDCL_API int clreduce(CLCONTEXT* cp, unsigned int devnum, const void* ptr,
                       size_t n, int type, int op, void* result);

/* Sorts the n keys at keys (a clmalloc pointer, or one inside an allocation,
 * aligned to the element) in device devnum's copy, in place: type is
 * CL_REDUCE_INT, _UINT, _LONG, _ULONG, _FLOAT or _DOUBLE (any device: keys
 * are sorted by their bits).  Ascending, or with CL_SORT_DESCENDING largest
 * first.  Floats: -0.0 before +0.0, and every NaN after +inf (before it,
 * descending).  Equal keys keep their order.  flags: CL_SORT_DESCENDING,
 * CL_EVENT_WAIT (default) or CL_EVENT_NOWAIT (clwait(cp, devnum,
 * CL_KERNEL_EVENT) joins).  Like a kernel, the sort runs after the commands
 * already enqueued on the memory and works on the device's copy: clmsync
 * the keys to the device first and back after.  n == 0 does nothing.
 * devnum is one device: CL_ALL_DEVICES is refused.  Returns 0, or
 * STDCL_EINVAL (bad type, flags or devnum, n past the end of the
 * allocation, a misaligned or NULL pointer, keys in CL_MEM_RO or CL_MEM_WO
 * memory, which kernels only read or only write), STDCL_ENOENT (keys not from
 * clmalloc), or an OpenCL failure.  A bad argument writes nothing; after
 * an OpenCL failure during the passes the device's copy may be partly
 * sorted.  Calls on one context are serialized; thread safe. */
STDCL_API int clsort(CLCONTEXT* cp, unsigned int devnum, void* keys, size_t n,
                     int type, int flags);
/* clsort, moving the n values at values (value_size bytes each, 1 to 16)
 * with their keys; stable (equal keys keep their values' order).  values is
 * clmalloc memory of the same context, not overlapping the keys.  Errors as
 * clsort's, and STDCL_EINVAL for value_size 0 or over 16, keys == values, or
 * overlapping arrays. */
STDCL_API int clsort_by_key(CLCONTEXT* cp, unsigned int devnum, void* keys,
                            void* values, size_t n, int type,
                            size_t value_size, int flags);
/* Prefix scan of the n elements at in into out (both clmalloc memory of cp,
 * the same element type; out may be in itself, not a shifted view of it):
 * out[i] = in[0] op in[1] op ... op in[i] (inclusive), or up to in[i - 1]
 * with CL_SCAN_EXCLUSIVE (out[0] is op's identity: 0, the type's largest
 * value or +inf for MIN, its smallest or -inf for MAX).  op: CL_REDUCE_SUM,
 * _MIN or _MAX; type as clsort's (double needs fp64 on the devices that
 * scan).  Integer sums wrap around; float MIN and MAX skip NaNs (as fmin and
 * fmax).  devnum: one device, or CL_ALL_DEVICES: device k scans the k-th of
 * equal slices of its own copy, carried over from the slices before it (the
 * call waits for each slice's total, then the scans run); each device's copy
 * of out then holds its slice's results (clmsyncn them back).  flags:
 * CL_SCAN_EXCLUSIVE, CL_EVENT_WAIT or CL_EVENT_NOWAIT.  Returns 0, or an
 * error as clsort's (STDCL_ESTATE: double on a device without fp64); a bad
 * argument writes nothing. */
STDCL_API int clscan(CLCONTEXT* cp, unsigned int devnum, const void* in,
                     void* out, size_t n, int type, int op, int flags);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ------------------------------------------------------------------------ */
/* The clarg_set and clforka forms                                           */
/* ------------------------------------------------------------------------ */

#ifdef __cplusplus

#include <type_traits>
/* The STDCL_TYPE_* of a value of type T (arrays and functions decay). */
template <class T>
constexpr int stdcl_type_of()
{
    typedef typename std::decay<T>::type U;
    typedef typename std::conditional<std::is_enum<U>::value,
        std::underlying_type<U>, std::decay<U> >::type::type V;
    return std::is_pointer<V>::value || std::is_same<V, decltype(nullptr)>::value
               ? STDCL_TYPE_POINTER
           : std::is_floating_point<V>::value ? STDCL_TYPE_FLOAT
           : std::is_integral<V>::value
               ? (std::is_signed<V>::value ? STDCL_TYPE_INT : STDCL_TYPE_UINT)
               : STDCL_TYPE_OTHER;
}

/* Values are taken as a call takes them: by value, an array as a pointer. */
template <class T>
inline int clarg_set(CLCONTEXT* cp, cl_kernel krn, unsigned int i, T x)
{ return stdcl_arg_sett(cp, krn, i, sizeof(T), stdcl_type_of<T>(), &x); }
template <class T>
inline int clarg_set(cl_kernel krn, unsigned int i, T x)
{ return stdcl_arg_sett(0, krn, i, sizeof(T), stdcl_type_of<T>(), &x); }
inline int clarg_set_local(CLCONTEXT* cp, cl_kernel krn, unsigned int i,
                           size_t size)
{ return stdcl_arg_set_local(cp, krn, i, size); }
inline int clarg_set_local(cl_kernel krn, unsigned int i, size_t size)
{ return stdcl_arg_set_local(0, krn, i, size); }
inline int clarg_set_global(CLCONTEXT* cp, cl_kernel krn, unsigned int i,
                            const void* ptr)
{ return stdcl_arg_set_global(cp, krn, i, ptr); }
inline int clarg_set_global(cl_kernel krn, unsigned int i, const void* ptr)
{ return stdcl_arg_set_global(0, krn, i, ptr); }

template <class... A>
inline cl_event clforka(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn,
                        clndrange_t* ndr, int flags, A... args)
{
    const size_t sizes[sizeof...(A) + 1] = { sizeof(A)..., 0 };
    const int types[sizeof...(A) + 1] = { stdcl_type_of<A>()..., 0 };
    const void* values[sizeof...(A) + 1] = { (const void*)&args..., 0 };
    return stdcl_forktv(cp, devnum, krn, ndr, flags, (int)sizeof...(A), sizes,
                        types, values);
}


#else /* C */

/* An argument as a call takes it (GCC/Clang): STDCL_DECAY(x) has x's type
 * after lvalue conversion, an array or function as a pointer, with no
 * integer promotion; STDCL_ADDR is the address of a copy of it, lvalue or
 * not; STDCL_TYPE its STDCL_TYPE_* (x is not evaluated by these but once,
 * in the copy). */
#define STDCL_DECAY(x) ((void)0, (x))
#define STDCL_ADDR(x) ((const void*)(__typeof__(STDCL_DECAY(x))[1]){ x })
#define STDCL_IS(x, t) __builtin_types_compatible_p(__typeof__(STDCL_DECAY(x)), t)
#define STDCL_UNSIGNED(x) \
    (STDCL_IS(x, unsigned char) || STDCL_IS(x, unsigned short) || \
     STDCL_IS(x, unsigned int) || STDCL_IS(x, unsigned long) || \
     STDCL_IS(x, unsigned long long) || STDCL_IS(x, _Bool) || \
     (STDCL_IS(x, char) && (char)-1 > 0))
#define STDCL_TYPE(x) \
    (__builtin_classify_type(STDCL_DECAY(x)) == 5 ? STDCL_TYPE_POINTER \
     : __builtin_classify_type(STDCL_DECAY(x)) == 8 ? STDCL_TYPE_FLOAT \
     : __builtin_classify_type(STDCL_DECAY(x)) <= 4 \
         ? (STDCL_UNSIGNED(x) ? STDCL_TYPE_UINT : STDCL_TYPE_INT) \
     : STDCL_TYPE_OTHER)
/* What a call cannot take fails to compile with the argument named: a void
 * expression for kernel argument n (from 0) of clforka gives "negative width
 * in bit-field 'clforka_kernel_argument_n_is_void'" first; clarg_set's value,
 * 'clarg_set_value_is_void'. */
#define STDCL_NOT_VOID(x, name) \
    (void)sizeof(struct { int name : \
        __builtin_types_compatible_p(__typeof__(STDCL_DECAY(x)), void) ? -1 : 1; })
#define STDCL_ARG_(x, name) \
    (STDCL_NOT_VOID(x, name), (size_t)sizeof(__typeof__(STDCL_DECAY(x)))), \
    (int)STDCL_TYPE(x), STDCL_ADDR(x)
#define STDCL_ARG(x, n) STDCL_ARG_(x, clforka_kernel_argument_##n##_is_void)

/* Generated: STDCL_NARG counts 1..64 arguments. */
#define STDCL_NARG(...) STDCL_NARG_(__VA_ARGS__, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define STDCL_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, N, ...) N
#define STDCL_CAT(a, b) STDCL_CAT_(a, b)
#define STDCL_CAT_(a, b) a##b
#define STDCL_FA_5(c, d, k, r, f) stdcl_forkt((c), (d), (k), (r), (f), 0)
#define STDCL_FA_6(c, d, k, r, f, a1) \
    stdcl_forkt((c), (d), (k), (r), (f), 1, STDCL_ARG(a1, 0))
#define STDCL_FA_7(c, d, k, r, f, a1, a2) \
    stdcl_forkt((c), (d), (k), (r), (f), 2, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1))
#define STDCL_FA_8(c, d, k, r, f, a1, a2, a3) \
    stdcl_forkt((c), (d), (k), (r), (f), 3, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2))
#define STDCL_FA_9(c, d, k, r, f, a1, a2, a3, a4) \
    stdcl_forkt((c), (d), (k), (r), (f), 4, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3))
#define STDCL_FA_10(c, d, k, r, f, a1, a2, a3, a4, a5) \
    stdcl_forkt((c), (d), (k), (r), (f), 5, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4))
#define STDCL_FA_11(c, d, k, r, f, a1, a2, a3, a4, a5, a6) \
    stdcl_forkt((c), (d), (k), (r), (f), 6, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5))
#define STDCL_FA_12(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7) \
    stdcl_forkt((c), (d), (k), (r), (f), 7, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6))
#define STDCL_FA_13(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8) \
    stdcl_forkt((c), (d), (k), (r), (f), 8, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7))
#define STDCL_FA_14(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
    stdcl_forkt((c), (d), (k), (r), (f), 9, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8))
#define STDCL_FA_15(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
    stdcl_forkt((c), (d), (k), (r), (f), 10, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9))
#define STDCL_FA_16(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
    stdcl_forkt((c), (d), (k), (r), (f), 11, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10))
#define STDCL_FA_17(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
    stdcl_forkt((c), (d), (k), (r), (f), 12, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11))
#define STDCL_FA_18(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) \
    stdcl_forkt((c), (d), (k), (r), (f), 13, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12))
#define STDCL_FA_19(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) \
    stdcl_forkt((c), (d), (k), (r), (f), 14, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13))
#define STDCL_FA_20(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15) \
    stdcl_forkt((c), (d), (k), (r), (f), 15, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14))
#define STDCL_FA_21(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16) \
    stdcl_forkt((c), (d), (k), (r), (f), 16, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15))
#define STDCL_FA_22(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17) \
    stdcl_forkt((c), (d), (k), (r), (f), 17, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16))
#define STDCL_FA_23(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18) \
    stdcl_forkt((c), (d), (k), (r), (f), 18, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17))
#define STDCL_FA_24(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19) \
    stdcl_forkt((c), (d), (k), (r), (f), 19, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18))
#define STDCL_FA_25(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20) \
    stdcl_forkt((c), (d), (k), (r), (f), 20, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19))
#define STDCL_FA_26(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21) \
    stdcl_forkt((c), (d), (k), (r), (f), 21, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20))
#define STDCL_FA_27(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22) \
    stdcl_forkt((c), (d), (k), (r), (f), 22, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21))
#define STDCL_FA_28(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23) \
    stdcl_forkt((c), (d), (k), (r), (f), 23, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22))
#define STDCL_FA_29(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24) \
    stdcl_forkt((c), (d), (k), (r), (f), 24, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23))
#define STDCL_FA_30(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25) \
    stdcl_forkt((c), (d), (k), (r), (f), 25, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24))
#define STDCL_FA_31(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26) \
    stdcl_forkt((c), (d), (k), (r), (f), 26, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25))
#define STDCL_FA_32(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27) \
    stdcl_forkt((c), (d), (k), (r), (f), 27, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26))
#define STDCL_FA_33(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28) \
    stdcl_forkt((c), (d), (k), (r), (f), 28, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26), STDCL_ARG(a28, 27))
#define STDCL_FA_34(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29) \
    stdcl_forkt((c), (d), (k), (r), (f), 29, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26), STDCL_ARG(a28, 27), STDCL_ARG(a29, 28))
#define STDCL_FA_35(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30) \
    stdcl_forkt((c), (d), (k), (r), (f), 30, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26), STDCL_ARG(a28, 27), STDCL_ARG(a29, 28), STDCL_ARG(a30, 29))
#define STDCL_FA_36(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31) \
    stdcl_forkt((c), (d), (k), (r), (f), 31, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26), STDCL_ARG(a28, 27), STDCL_ARG(a29, 28), STDCL_ARG(a30, 29), STDCL_ARG(a31, 30))
#define STDCL_FA_37(c, d, k, r, f, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32) \
    stdcl_forkt((c), (d), (k), (r), (f), 32, STDCL_ARG(a1, 0), STDCL_ARG(a2, 1), STDCL_ARG(a3, 2), STDCL_ARG(a4, 3), STDCL_ARG(a5, 4), STDCL_ARG(a6, 5), STDCL_ARG(a7, 6), STDCL_ARG(a8, 7), STDCL_ARG(a9, 8), STDCL_ARG(a10, 9), STDCL_ARG(a11, 10), STDCL_ARG(a12, 11), STDCL_ARG(a13, 12), STDCL_ARG(a14, 13), STDCL_ARG(a15, 14), STDCL_ARG(a16, 15), STDCL_ARG(a17, 16), STDCL_ARG(a18, 17), STDCL_ARG(a19, 18), STDCL_ARG(a20, 19), STDCL_ARG(a21, 20), STDCL_ARG(a22, 21), STDCL_ARG(a23, 22), STDCL_ARG(a24, 23), STDCL_ARG(a25, 24), STDCL_ARG(a26, 25), STDCL_ARG(a27, 26), STDCL_ARG(a28, 27), STDCL_ARG(a29, 28), STDCL_ARG(a30, 29), STDCL_ARG(a31, 30), STDCL_ARG(a32, 31))

/* clarg_set(cp, krn, i, x) or clarg_set(krn, i, x); likewise for
 * clarg_set_local (x: bytes) and clarg_set_global (x: clmalloc pointer). */
#define clarg_set(...) STDCL_CAT(STDCL_ARGSET_, STDCL_NARG(__VA_ARGS__))(__VA_ARGS__)
#define STDCL_ARGSET_3(k, i, x) \
    stdcl_arg_sett(0, (k), (i), STDCL_ARG_(x, clarg_set_value_is_void))
#define STDCL_ARGSET_4(c, k, i, x) \
    stdcl_arg_sett((c), (k), (i), STDCL_ARG_(x, clarg_set_value_is_void))
#define clarg_set_local(...) \
    STDCL_CAT(STDCL_ARGLOC_, STDCL_NARG(__VA_ARGS__))(__VA_ARGS__)
#define STDCL_ARGLOC_3(k, i, n) stdcl_arg_set_local(0, (k), (i), (n))
#define STDCL_ARGLOC_4(c, k, i, n) stdcl_arg_set_local((c), (k), (i), (n))
#define clarg_set_global(...) \
    STDCL_CAT(STDCL_ARGGLB_, STDCL_NARG(__VA_ARGS__))(__VA_ARGS__)
#define STDCL_ARGGLB_3(k, i, p) stdcl_arg_set_global(0, (k), (i), (p))
#define STDCL_ARGGLB_4(c, k, i, p) stdcl_arg_set_global((c), (k), (i), (p))

/* clforka(cp, devnum, krn, &ndr, flags, arg0, ..., argN), up to 32 args:
 * scalars, OpenCL vector types, clmalloc pointers and __local markers
 * (CLLOCAL, CLLOCAL_PER_ITEM, CLLOCAL_FN), in kernel order. */
#define clforka(...) STDCL_CAT(STDCL_FA_, STDCL_NARG(__VA_ARGS__))(__VA_ARGS__)

#endif /* __cplusplus */

/* clexec(cp, devnum, &ndr, kernel_name, args...): clforka of the kernel
 * named kernel_name (an identifier, found with clsym(cp, NULL, ...): open or
 * embedded programs) with CL_EVENT_NOWAIT; clexecb blocks (CL_EVENT_WAIT).
 * They give clforka's event; an unknown kernel gives NULL (clerror(): the
 * kernel is NULL; clsym says why it is not found). */
#define clexec(cp, devnum, ndrp, ksym, ...) \
    clforka((cp), (devnum), clsym((cp), 0, #ksym, CLLD_NOW), (ndrp), \
            CL_EVENT_NOWAIT, __VA_ARGS__)
#define clexecb(cp, devnum, ndrp, ksym, ...) \
    clforka((cp), (devnum), clsym((cp), 0, #ksym, CLLD_NOW), (ndrp), \
            CL_EVENT_WAIT, __VA_ARGS__)

/* The components of a cl_float4 lvalue, as STDCL 1.6 spelled them. */
#define cl_float4_x(f) (((cl_float*)&(f))[0])
#define cl_float4_y(f) (((cl_float*)&(f))[1])
#define cl_float4_z(f) (((cl_float*)&(f))[2])
#define cl_float4_w(f) (((cl_float*)&(f))[3])

#endif /* host side */

#endif /* STDCL_H */
