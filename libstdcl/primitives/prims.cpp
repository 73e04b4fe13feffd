// SPDX-License-Identifier: MIT
// prims.cpp: what clsort and clscan share (prims.hpp).
#include "primitives/prims.hpp"

#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "programs/program.hpp"
#include "memory/sync_check.hpp"

#include <cstring>
#include <type_traits>
#include <limits>
#include <cmath>

namespace stdcl {

// The kernels' element types and operations are clreduce's numbers.
static_assert(PRIM_FLOAT == CL_REDUCE_FLOAT && PRIM_DOUBLE == CL_REDUCE_DOUBLE && PRIM_INT == CL_REDUCE_INT &&
                  PRIM_LONG == CL_REDUCE_LONG && PRIM_UINT == CL_REDUCE_UINT && PRIM_ULONG == CL_REDUCE_ULONG,
              "cl/protocol.h's types are stdcl.h's CL_REDUCE_ types");
static_assert(PRIM_SUM == CL_REDUCE_SUM && PRIM_MIN == CL_REDUCE_MIN && PRIM_MAX == CL_REDUCE_MAX,
              "cl/protocol.h's operations are stdcl.h's CL_REDUCE_ operations");

const char* const kPrimOpNames[4] = {"", "sum", "min", "max"};

namespace {

// The host side of the operations: clscan's carries between devices, clreduce's
// fold of the devices' partial values.
template <class T> T host_op(int op, T a, T b)
{
    if constexpr (std::is_floating_point<T>::value) {
        if (op == CL_REDUCE_MIN) return std::fmin(a, b);
        if (op == CL_REDUCE_MAX) return std::fmax(a, b);
        return a + b;
    } else {
        using U = typename std::make_unsigned<T>::type;
        if (op == CL_REDUCE_MIN) return b < a ? b : a;
        if (op == CL_REDUCE_MAX) return b > a ? b : a;
        return T(U(a) + U(b));
    }
}
template <class T> T host_identity(int op)
{
    if (op == CL_REDUCE_SUM) return T(0);
    if constexpr (std::is_floating_point<T>::value)
        return op == CL_REDUCE_MIN ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    else
        return op == CL_REDUCE_MIN ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}
// Identity and op over the type's bytes (8 at most).
template <class T> void bytes_identity(int op, unsigned char* out)
{
    T v = host_identity<T>(op);
    std::memcpy(out, &v, sizeof v);
}
template <class T> void bytes_op(int op, unsigned char* acc, const unsigned char* b)
{
    T x, y;
    std::memcpy(&x, acc, sizeof x);
    std::memcpy(&y, b, sizeof y);
    x = host_op<T>(op, x, y);
    std::memcpy(acc, &x, sizeof x);
}
}  // namespace

void prim_identity(int type, int op, unsigned char* out)
{
    switch (type) {
    case CL_REDUCE_FLOAT: bytes_identity<cl_float>(op, out); break;
    case CL_REDUCE_DOUBLE: bytes_identity<cl_double>(op, out); break;
    case CL_REDUCE_INT: bytes_identity<cl_int>(op, out); break;
    case CL_REDUCE_LONG: bytes_identity<cl_long>(op, out); break;
    case CL_REDUCE_UINT: bytes_identity<cl_uint>(op, out); break;
    default: bytes_identity<cl_ulong>(op, out); break;
    }
}
void prim_combine(int type, int op, unsigned char* acc, const unsigned char* b)
{
    switch (type) {
    case CL_REDUCE_FLOAT: bytes_op<cl_float>(op, acc, b); break;
    case CL_REDUCE_DOUBLE: bytes_op<cl_double>(op, acc, b); break;
    case CL_REDUCE_INT: bytes_op<cl_int>(op, acc, b); break;
    case CL_REDUCE_LONG: bytes_op<cl_long>(op, acc, b); break;
    case CL_REDUCE_UINT: bytes_op<cl_uint>(op, acc, b); break;
    default: bytes_op<cl_ulong>(op, acc, b); break;
    }
}

namespace {

template <class T> void fold_as(int op, unsigned char* acc, const void* vals, size_t count)
{
    T x;
    std::memcpy(&x, acc, sizeof x);
    const unsigned char* v = static_cast<const unsigned char*>(vals);
    for (size_t i = 0; i < count; ++i) {
        T y;
        std::memcpy(&y, v + i * sizeof y, sizeof y);
        x = host_op<T>(op, x, y);
    }
    std::memcpy(acc, &x, sizeof x);
}

}  // namespace

void prim_fold(int type, int op, unsigned char* acc, const void* vals, size_t count)
{
    switch (type) {
    case CL_REDUCE_FLOAT: fold_as<cl_float>(op, acc, vals, count); break;
    case CL_REDUCE_DOUBLE: fold_as<cl_double>(op, acc, vals, count); break;
    case CL_REDUCE_INT: fold_as<cl_int>(op, acc, vals, count); break;
    case CL_REDUCE_LONG: fold_as<cl_long>(op, acc, vals, count); break;
    case CL_REDUCE_UINT: fold_as<cl_uint>(op, acc, vals, count); break;
    default: fold_as<cl_ulong>(op, acc, vals, count); break;
    }
}

void prim_check_double(CLCONTEXT* cp, unsigned dn, const char* call)
{
    cl_device_fp_config fp = 0;
    check_cl(clGetDeviceInfo(cp->devs[dn].id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, nullptr),
             strprintf("%s: clGetDeviceInfo(CL_DEVICE_DOUBLE_FP_CONFIG)", call).c_str());
    if (!fp)
        fail(STDCL_ESTATE, "%s: device %u (%s) has no double precision (cl_khr_fp64): it cannot work on doubles", call,
             dn, cp->devs[dn].name.c_str());
}

namespace {

const ElemType kElemTypes[7] = {{"", 0, 0},         {"float", 4, 2}, {"double", 8, 2}, {"int", 4, 1},
                                {"long", 8, 1},     {"uint", 4, 0},  {"ulong", 8, 0}};

std::mutex g_states_mu;
std::vector<std::shared_ptr<PrimState>>& states()
{
    static auto* v = new std::vector<std::shared_ptr<PrimState>>;  // usable during exit
    return *v;
}

}  // namespace

bool prim_handle_open(CLCONTEXT* cp, void* h)
{
    if (!h) return false;
    std::lock_guard<std::mutex> lock(cp->load_mu);
    for (auto& p : cp->programs)
        if (p.get() == h) return true;
    return false;
}

const ElemType* elem_type(int type) { return type >= 1 && type <= 6 ? &kElemTypes[type] : nullptr; }

PrimArray prim_array(const char* call, const char* what, CLCONTEXT* cp, const void* ptr, size_t n, size_t es,
                     const char* tname, int use)
{
    if (!ptr) fail(STDCL_EINVAL, "%s: %s is NULL", call, what);
    PrimArray a;
    a.alloc = registry_find(ptr, &a.off);
    if (!a.alloc) fail(STDCL_ENOENT, "%s: %s (%p) is not memory returned by clmalloc (or it was freed)", call, what, ptr);
    if (a.alloc->cp != cp)
        fail(STDCL_EINVAL, "%s: %s: the allocation at %p is %s", call, what, (void*)a.alloc->host,
             a.alloc->cp ? "attached to another context" : "detached (clmattach it first)");
    if (a.alloc->is_image) fail(STDCL_EINVAL, "%s: %s: the allocation at %p is an image", call, what, (void*)a.alloc->host);
    if ((use & prim_write) && (a.alloc->flags & CL_MEM_RO))
        fail(STDCL_EINVAL, "%s: %s: the allocation at %p is CL_MEM_RO (kernels only read it), and %s writes it", call,
             what, (void*)a.alloc->host, call);
    if ((use & prim_read) && (a.alloc->flags & CL_MEM_WO))
        fail(STDCL_EINVAL, "%s: %s: the allocation at %p is CL_MEM_WO (kernels only write it), and %s reads it", call,
             what, (void*)a.alloc->host, call);
    if (es > 1 && es <= 16 && (es & (es - 1)) == 0 && a.off % es)
        fail(STDCL_EINVAL, "%s: %s (%p) is not aligned to its %zu-byte %s elements", call, what, ptr, es, tname);
    size_t room = (a.alloc->size - a.off) / es;
    if (n > room)
        fail(STDCL_EINVAL, "%s: %s: %zu %s elements from %p pass the end of the allocation (%zu fit)", call, what, n,
             tname, ptr, room);
    return a;
}

bool prim_overlap(const PrimArray& a, size_t na, const PrimArray& b, size_t nb)
{
    if (a.alloc != b.alloc || na == 0 || nb == 0) return false;
    return a.off < b.off + nb && b.off < a.off + na;
}

namespace {

// Unmaps and releases p's buffer and its queue.
void release_pinned(PrimState::Pinned& p) noexcept
{
    if (p.mem && p.host && p.q && clEnqueueUnmapMemObject(p.q, p.mem, p.host, 0, nullptr, nullptr) == CL_SUCCESS)
        clFinish(p.q);
    if (p.mem) clReleaseMemObject(p.mem);
    if (p.q) clReleaseCommandQueue(p.q);
    p = PrimState::Pinned{};
}

}  // namespace

PrimState::~PrimState()
{
    for (auto& dev : scratch)
        for (auto& s : dev)
            if (s.second.mem) clReleaseMemObject(s.second.mem);
    for (auto& p : pinned) release_pinned(p);
}

void* prim_pinned(PrimState& st, unsigned dn, size_t bytes) noexcept
{
    PrimState::Pinned& p = st.pinned[dn];
    if (p.host && p.bytes >= bytes) return p.host;
    release_pinned(p);  // too small: the calls that read into it have ended
    const size_t want = std::max<size_t>(bytes, 64);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(st.cp->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, want, nullptr, &err);
    if (err != CL_SUCCESS || !m) return nullptr;
    cl_command_queue q = st.cp->devs[dn].xfer;
    void* host = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, want, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS || !host || clRetainCommandQueue(q) != CL_SUCCESS) {
        if (err == CL_SUCCESS && host && clEnqueueUnmapMemObject(q, m, host, 0, nullptr, nullptr) == CL_SUCCESS)
            clFinish(q);
        clReleaseMemObject(m);
        return nullptr;
    }
    p.mem = m;
    p.host = host;
    p.q = q;
    p.bytes = want;
    return host;
}

std::shared_ptr<PrimState> prim_state(CLCONTEXT* cp)
{
    std::lock_guard<std::mutex> lock(g_states_mu);
    auto& v = states();
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i]->cp != cp) continue;
        if (v[i]->ctx == cp->ctx) return v[i];
        v.erase(v.begin() + long(i));  // a destroyed context's address, reused
        break;
    }
    auto s = std::make_shared<PrimState>();
    s->cp = cp;
    s->ctx = cp->ctx;
    s->scratch.resize(cp->devs.size());
    s->pinned.resize(cp->devs.size());
    v.push_back(s);
    return s;
}

void prims_forget_context(CLCONTEXT* cp) noexcept
{
    try {
        std::shared_ptr<PrimState> gone;  // released after the lock (clReleaseMemObject)
        std::lock_guard<std::mutex> lock(g_states_mu);
        auto& v = states();
        for (size_t i = 0; i < v.size(); ++i)
            if (v[i]->cp == cp) {
                gone = std::move(v[i]);
                v.erase(v.begin() + long(i));
                break;
            }
    } catch (...) {
        // std::mutex::lock failed: the state stays listed; prim_state replaces it
        // when the address comes back.
    }
}

void* prim_program(PrimState& st, const std::string& name, const char* source, const std::string& options,
                   const char* call)
{
    void*& h = st.handles[name];
    if (prim_handle_open(st.cp, h)) return h;
    for (auto it = st.kernels.begin(); it != st.kernels.end();)  // a closed handle's kernels
        it = it->first.first == h ? st.kernels.erase(it) : std::next(it);
    auto bad = st.failed.find(name);
    if (bad != st.failed.end()) fail(STDCL_EBUILD, "%s: building its kernels (%s): %s", call, name.c_str(), bad->second.c_str());
    try {
        h = open_library_program(st.cp, source, name.c_str(), options.c_str());
    } catch (const Error& e) {
        // The compiler refused it: it would again.  Anything else (memory, a
        // failed OpenCL call) may pass next time, and is tried again.
        if (e.code == STDCL_EBUILD) st.failed[name] = e.msg;
        fail(e.code, "%s: building its kernels (%s): %s", call, name.c_str(), e.msg.c_str());
    }
    return h;
}

cl_uint prim_units(PrimState& st, unsigned dn, const char* call)
{
    if (st.units.size() != st.cp->devs.size()) {
        std::vector<cl_uint> units(st.cp->devs.size(), 1);
        for (size_t i = 0; i < units.size(); ++i) {
            check_cl(clGetDeviceInfo(st.cp->devs[i].id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units[i], &units[i],
                                     nullptr),
                     strprintf("%s: clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)", call).c_str());
            units[i] = std::max<cl_uint>(units[i], 1);
        }
        st.units.swap(units);
    }
    return st.units[dn];
}

cl_mem prim_scratch(PrimState& st, unsigned dn, const char* name, size_t bytes, const char* call)
{
    Scratch& s = st.scratch[dn][name];
    if (s.mem && s.bytes >= bytes) return s.mem;
    // Commands already enqueued keep the old buffer until they complete.
    if (s.mem) clReleaseMemObject(s.mem);
    s.mem = nullptr;
    s.bytes = 0;
    s.epoch = 0;
    s.zero_half = 0;
    cl_int err = CL_SUCCESS;
    size_t want = std::max<size_t>(bytes, 64);
    cl_mem m = clCreateBuffer(st.cp->ctx, CL_MEM_READ_WRITE, want, nullptr, &err);
    if (err != CL_SUCCESS || !m)
        fail_cl(err, "%s: clCreateBuffer of %zu bytes of scratch memory (%s) on device %u", call, want, name, dn);
    s.mem = m;
    s.bytes = want;
    return m;
}

cl_mem prim_lookback_state(PrimState& st, unsigned dn, const char* name, size_t bytes, cl_uint epochs, cl_uint* epoch,
                           CommandOrder* order, const char* call)
{
    cl_mem m = prim_scratch(st, dn, name, bytes, call);
    Scratch& sc = st.scratch[dn][name];
    if (sc.epoch == 0 || sc.epoch > PRIM_EPOCH_MAX - epochs) {
        sc.epoch = 0;
        const cl_uint zero = 0;
        cl_int err =
            clEnqueueFillBuffer(st.cp->devs[dn].queue, m, &zero, sizeof zero, 0, sc.bytes, order ? order->count() : 0,
                                order ? order->list() : nullptr, nullptr);
        if (err != CL_SUCCESS) fail_cl(err, "%s: clEnqueueFillBuffer of the look-back state (%s)", call, name);
    }
    *epoch = sc.epoch + 1;
    sc.epoch += epochs;
    return m;
}

bool prim_layout_choice(const Device& d, const char* var, const char* gpu_word, const char* cpu_word)
{
    const char* v = env_value(var);
    if (v && *v) {
        if (std::strcmp(v, gpu_word) == 0) return true;
        if (std::strcmp(v, cpu_word) == 0) return false;
        warn_once(var, "%s='%s' is not %s or %s; ignored", var, v, gpu_word, cpu_word);
    }
    return (d.type & CL_DEVICE_TYPE_CPU) == 0;
}

bool prim_gpu_layout(const Device& d) { return prim_layout_choice(d, "STDCL_PRIMS_LAYOUT", "gpu", "cpu"); }

std::shared_ptr<KernelInfo> prim_kernel(PrimState& st, void* handle, const std::string& name, const char* call)
{
    std::weak_ptr<KernelInfo>& slot = st.kernels[std::make_pair(handle, name)].ki;
    std::shared_ptr<KernelInfo> ki = slot.lock();
    if (!ki) {
        ki = program_kernel(st.cp, handle, name, call);
        slot = ki;
    }
    return ki;
}

cl_event prim_enqueue(PrimState& st, unsigned dn, void* handle, const std::string& name, size_t global, size_t local,
                      std::initializer_list<PrimArg> args, CommandOrder* order, bool want_event, const char* call,
                      cl_event after)
{
    CLCONTEXT* cp = st.cp;
    Device& d = cp->devs[dn];
    auto ki = prim_kernel(st, handle, name, call);
    size_t g = size_t(d.group) < ki->per_group.size() ? size_t(d.group) : 0;
    cl_kernel kern = ki->per_group[g];
    // Under the profile: the kernel's row, before anything is enqueued.
    const std::string* row = nullptr;
    if (cp->prof) {
        std::string& r = st.kernels[std::make_pair(handle, name)].row;
        if (r.empty()) {
            std::string prog = "?";
            for (const auto& h : st.handles)
                if (h.second == handle) prog = h.first;
            r = std::string(call) + ": " + name + " (" + prog + ")";
        }
        row = &r;
    }
    std::lock_guard<KernelLock> klock(ki->mu);
    cl_uint i = 0;
    cl_int err = CL_SUCCESS;
    for (const PrimArg& a : args) {
        err = clSetKernelArg(kern, i, a.size, a.value);
        if (err != CL_SUCCESS) fail_cl(err, "%s: clSetKernelArg %u of %s", call, i, name.c_str());
        ++i;
    }
    cl_event ev = nullptr;
    size_t gsz = std::max<size_t>(global, local ? local : 1);
    cl_uint nwait = order ? order->count() : 0;
    const cl_event* wait = order ? order->list() : nullptr;
    std::vector<cl_event> waits;
    if (after) {
        waits.assign(wait, wait + nwait);
        waits.push_back(after);
        nwait = cl_uint(waits.size());
        wait = waits.data();
    }
    err = clEnqueueNDRangeKernel(d.queue, kern, 1, nullptr, &gsz, local ? &local : nullptr, nwait,
                                 nwait ? wait : nullptr, want_event || row ? &ev : nullptr);
    // No kernel object keeps a buffer past the call (prims.hpp).
    i = 0;
    for (const PrimArg& a : args) {
        if (a.mem) clSetKernelArg(kern, i, sizeof(cl_mem), nullptr);
        ++i;
    }
    if (err != CL_SUCCESS) fail_cl(err, "%s: clEnqueueNDRangeKernel of %s on device %u", call, name.c_str(), dn);
    if (row) {
        // The profile keeps its own reference; timed when it completes.
        CommandTag tag{CommandTag::kernel, row, 0, true};
        tag.items = gsz;
        profile_command(cp, dn, ev, tag, false);
        if (!want_event) {
            clReleaseEvent(ev);
            ev = nullptr;
        }
    }
    return ev;
}

cl_event prim_finish(CLCONTEXT* cp, unsigned dn, CommandOrder& order, cl_event ev, int flags, const std::string& what)
{
    order.enqueued(ev, flags);
    CommandTag tag{CommandTag::kernel, &what, 0, true};
    tag.profiled = true;
    return event_finish(cp, dn, ev, flags, tag);
}

void prim_check_read(CLCONTEXT* cp, unsigned dn, Allocation& a, size_t from, size_t len, const std::string& what,
                     const char* call, void* caller)
{
    if (!a.sync) return;
    sync_check_command_read(cp, dn, a, from, len, call, what, "called by", call, caller);
}

void prim_note_write(CLCONTEXT* cp, unsigned dn, Allocation& a, size_t from, size_t len, const std::string& what)
{
    (void)cp;
    a.note_device_write(dn);
    if (a.sync) sync_note_device_write(a, dn, from, what, len);
}

}  // namespace stdcl
