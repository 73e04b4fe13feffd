// SPDX-License-Identifier: MIT
// prims.hpp: what clsort and clscan share (prims.cpp): their element types, the
// checks of their arrays, their kernels (cl/*.cl) built once per context,
// the scratch memory each device keeps for them, and the enqueue of one of
// their kernels.
//
// A call is one command to the program: its kernels go to the device's kernel
// queue one after another (the queue keeps their order), the first after the
// commands pending on the memory it uses (CommandOrder), and the last one's
// event is the call's (waited for, or tracked for clwait with CL_EVENT_NOWAIT).
// Calls on one context are serialized (a mutex per context), so the scratch
// memory is never shared by two calls at once; a later call's kernels queue
// behind an earlier NOWAIT call's, so neither is its memory.  Kernel arguments
// naming memory are reset after each enqueue: no kernel object keeps a buffer,
// so growing the scratch or freeing the program's memory never leaves one
// naming a released buffer.
#pragma once

#include "events/events.hpp"
#include "kernels/kernel.hpp"
#include "memory/memory.hpp"
#include "primitives/cl/protocol.h"

#include <mutex>

namespace stdcl {

// The programs' OpenCL C, cl/scan.cl, cl/sort.cl and cl/reduce.cl with their
// includes inlined (tools/embed_cl.sh writes them into the build at build
// time); the variant is chosen by -D options (each file says which).
extern const char* const kScanCl;
extern const char* const kSortCl;
extern const char* const kReduceCl;

// An element type of clsort, clscan and clreduce (CL_REDUCE_*).
struct ElemType {
    const char* name;  // "int"
    size_t size;
    unsigned kind;  // 0 unsigned, 1 signed, 2 floating point (clsort's key map)
};
// The type's description, or nullptr for an unknown one.
const ElemType* elem_type(int type);

// The operations' names ("sum", "min", "max"), by CL_REDUCE_SUM ... _MAX.
extern const char* const kPrimOpNames[4];
// The identity of op for element type `type` (CL_REDUCE_FLOAT ...), and acc =
// acc op b, over the elements' bytes: what the kernels compute, on the host
// (integer sums wrap; floating-point minimum and maximum skip NaNs, as fmin and
// fmax).
void prim_identity(int type, int op, unsigned char* out);
void prim_combine(int type, int op, unsigned char* acc, const unsigned char* b);
// acc = acc op each of the count elements at vals (one switch on the type for
// all of them: clreduce folds a thousand partial values a call).
void prim_fold(int type, int op, unsigned char* acc, const void* vals, size_t count);
// Fails (STDCL_ESTATE) unless device dn of cp has double precision, for `call`.
void prim_check_double(CLCONTEXT* cp, unsigned dn, const char* call);

// An array a call works on: its allocation and the offset of its first byte.
struct PrimArray {
    std::shared_ptr<Allocation> alloc;
    size_t off = 0;
};
// How a call uses an array: reads it, writes it, or both.
enum PrimUse { prim_read = 1, prim_write = 2 };
// Checks ptr (named `what` in messages) as an array of n elements of es bytes
// of cp's memory, for `call`, used as `use` says (an allocation kernels only
// read, CL_MEM_RO, is not written; one they only write, CL_MEM_WO, not read).
PrimArray prim_array(const char* call, const char* what, CLCONTEXT* cp, const void* ptr, size_t n, size_t es,
                     const char* tname, int use);
// Whether the byte ranges of a and b (na and nb bytes) overlap.
bool prim_overlap(const PrimArray& a, size_t na, const PrimArray& b, size_t nb);

// A device's scratch buffer, grown to the largest size asked for.
struct Scratch {
    cl_mem mem = nullptr;
    size_t bytes = 0;
    cl_uint epoch = 0;  // look-back state: the last epoch used (0: to be cleared)
    cl_uint zero_half = 0;  // clsort's digit counts: 1 or 2 the half that is zero (0: to be cleared)
};

// What clsort, clscan and clreduce keep per context: their programs and each
// device's scratch memory.
struct PrimState {
    CLCONTEXT* cp = nullptr;
    cl_context ctx = nullptr;  // with cp: the context this state is for
    std::mutex mu;  // one call at a time per context
    std::map<std::string, void*> handles;  // program name -> clsopen_named handle
    std::map<std::string, std::string> failed;  // program name -> why its build failed
    // Kernels by (program handle, name), found once (prim_enqueue); weak: a
    // program closed with its context is never used, and found again if a
    // handle's address comes back.  row: the kernel's row in the profile
    // (STDCL_PROFILE), "call: kernel (program)", made at its first profiled launch.
    struct Kernel {
        std::weak_ptr<KernelInfo> ki;
        std::string row;
    };
    std::map<std::pair<void*, std::string>, Kernel> kernels;
    std::vector<std::map<std::string, Scratch>> scratch;  // per device, by name
    std::vector<cl_uint> units;  // per device: CL_DEVICE_MAX_COMPUTE_UNITS (prim_units)
    std::vector<signed char> sort_wide;  // per device: sort.cpp's wide pass (1 yes, 0 no, -1 not asked yet)
    // Per device: pinned host memory (prim_pinned), a CL_MEM_ALLOC_HOST_PTR
    // buffer mapped on q (retained) for as long as the state lives.
    struct Pinned {
        cl_mem mem = nullptr;
        void* host = nullptr;
        cl_command_queue q = nullptr;
        size_t bytes = 0;
    };
    std::vector<Pinned> pinned;
    ~PrimState();
};
// Device dn's compute units (at least 1), asked of OpenCL once per state;
// st.mu held.
cl_uint prim_units(PrimState& st, unsigned dn, const char* call);
// Whether h is a program handle cp still has open.
bool prim_handle_open(CLCONTEXT* cp, void* h);
// cp's state (made at the first call), its mutex not held.
std::shared_ptr<PrimState> prim_state(CLCONTEXT* cp);
// The program `name` of st's context (built from source with the build
// options at the first call), for `call`; a build the compiler refused fails
// again at once, any other failure (memory, an OpenCL call) is tried again at
// the next call.
void* prim_program(PrimState& st, const std::string& name, const char* source, const std::string& options,
                   const char* call);
// Device dn's scratch buffer `name` of at least bytes bytes.
cl_mem prim_scratch(PrimState& st, unsigned dn, const char* name, size_t bytes, const char* call);
// At least bytes bytes of host memory pinned for device dn (kept with the
// state; st.mu held): a read into it is a transfer the device makes alone,
// where a read into pageable memory that is not waited for at once ends late
// on NVIDIA's OpenCL (BENCHMARKS Table 15.18).  nullptr where it cannot be
// had (the caller reads into its own memory instead).
void* prim_pinned(PrimState& st, unsigned dn, size_t bytes) noexcept;
// Device dn's look-back state `name` (clscan's, clsort's) of at least bytes
// bytes: words tagged with an epoch, so that a call needs no clearing when its
// epochs are new.  The buffer is cleared on the device's queue when it is new or
// when the epochs run out.  *epoch: the first of the `epochs` epochs the call
// takes (one a pass).  A call that fails after taking them sets the state's
// Scratch::epoch to 0, so that the next call clears it.  The clearing waits for
// order's list (the call's first command; order may be nullptr).
cl_mem prim_lookback_state(PrimState& st, unsigned dn, const char* name, size_t bytes, cl_uint epochs, cl_uint* epoch,
                           CommandOrder* order, const char* call);
// Whether device d takes a call's GPU layout: the environment variable var
// set to gpu_word says yes, cpu_word no (anything else is warned about once
// and ignored); unset, a GPU or an accelerator does.
bool prim_layout_choice(const Device& d, const char* var, const char* gpu_word, const char* cpu_word);
// Whether the kernels for device d are the GPU layout: a GPU or an
// accelerator, or STDCL_PRIMS_LAYOUT=gpu (cpu: the CPU layout; for tests).
bool prim_gpu_layout(const Device& d);

// One kernel argument: memory (a cl_mem, reset after the enqueue) or a value.
struct PrimArg {
    size_t size;
    const void* value;
    bool mem;
};
inline PrimArg parg(const cl_mem& m) { return PrimArg{sizeof m, &m, true}; }
// bytes of __local memory.
inline PrimArg plocal(size_t bytes) { return PrimArg{bytes, nullptr, false}; }
template <class T> PrimArg parg(const T& v) { return PrimArg{sizeof v, &v, false}; }

// The kernel `name` of program handle (of st's context), found once.
std::shared_ptr<KernelInfo> prim_kernel(PrimState& st, void* handle, const std::string& name, const char* call);
// Enqueues kernel `name` of program handle (of st's context) on device dn's kernel queue over
// `global` work-items in groups of `local` (0: the driver's choice), after the
// wait list (order's, or nothing) and the event after (when not nullptr: a
// command of the call on another device), with the arguments; returns its
// event when want_event (else nullptr).  Under STDCL_PROFILE every kernel is
// timed, each under its own row (PrimState::Kernel::row).
cl_event prim_enqueue(PrimState& st, unsigned dn, void* handle, const std::string& name, size_t global, size_t local,
                      std::initializer_list<PrimArg> args, CommandOrder* order, bool want_event, const char* call,
                      cl_event after = nullptr);

// The end of a call's commands on device dn: notes ev (its last kernel) as the
// last command on the memory, then waits for it or tracks it as flags say
// (CL_EVENT_NOWAIT: clwait joins it); returns what event_finish does.  ev is in
// the profile already (prim_enqueue).
cl_event prim_finish(CLCONTEXT* cp, unsigned dn, CommandOrder& order, cl_event ev, int flags, const std::string& what);

// The sync check of a call's arrays (when it is on): a read of bytes [from, from
// + len) of a by `what` on device dn must find the device's copy current;
// prim_note_write notes that the call changed them there.
void prim_check_read(CLCONTEXT* cp, unsigned dn, Allocation& a, size_t from, size_t len, const std::string& what,
                     const char* call, void* caller);
void prim_note_write(CLCONTEXT* cp, unsigned dn, Allocation& a, size_t from, size_t len, const std::string& what);

}  // namespace stdcl
