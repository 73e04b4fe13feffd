// SPDX-License-Identifier: MIT
// compat.cpp: the STDCL 1.6 calls that libstdcl's own design does not need but
// COPRTHR's programs call: clwait's cl_event form and clwaitev, clstat,
// clgetdevinfo and clfreport_devinfo, clmemptr, clload and clloadb, clglmalloc and
// clglmsync, the 4-d index space, the old STDX="key=value:..." environment form
// and the folder of the kernel-side <stdcl.h>.
//
// Each is a thin layer over the library's own calls and objects; none keeps state
// beyond clwait's returned events (one per device, released with the context) and
// the GL objects behind clglmalloc allocations.
#include "events/events.hpp"
#include "programs/program.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"
#include "helpers/host_state.hpp"

#include <dlfcn.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace stdcl {

namespace {

// The GL-sharing entry points, looked up in the loaded OpenCL library at first use
// (dlsym): a program that never calls clglmalloc does not import them, and a
// platform without GL sharing never reaches them.
struct GlCalls {
    decltype(&::clGetContextInfo) context_info = nullptr;
    decltype(&::clGetMemObjectInfo) mem_info = nullptr;
    decltype(&::clCreateFromGLBuffer) from_buffer = nullptr;
    decltype(&::clCreateFromGLRenderbuffer) from_renderbuffer = nullptr;
    decltype(&::clCreateFromGLTexture) from_texture = nullptr;
    decltype(&::clEnqueueAcquireGLObjects) acquire = nullptr;
    decltype(&::clEnqueueReleaseGLObjects) release = nullptr;
};
const GlCalls& gl_calls()
{
    static const GlCalls g = [] {
        GlCalls c;
        c.context_info = reinterpret_cast<decltype(c.context_info)>(dlsym(RTLD_DEFAULT, "clGetContextInfo"));
        c.mem_info = reinterpret_cast<decltype(c.mem_info)>(dlsym(RTLD_DEFAULT, "clGetMemObjectInfo"));
        c.from_buffer = reinterpret_cast<decltype(c.from_buffer)>(dlsym(RTLD_DEFAULT, "clCreateFromGLBuffer"));
        c.from_renderbuffer =
            reinterpret_cast<decltype(c.from_renderbuffer)>(dlsym(RTLD_DEFAULT, "clCreateFromGLRenderbuffer"));
        c.from_texture = reinterpret_cast<decltype(c.from_texture)>(dlsym(RTLD_DEFAULT, "clCreateFromGLTexture"));
        c.acquire = reinterpret_cast<decltype(c.acquire)>(dlsym(RTLD_DEFAULT, "clEnqueueAcquireGLObjects"));
        c.release = reinterpret_cast<decltype(c.release)>(dlsym(RTLD_DEFAULT, "clEnqueueReleaseGLObjects"));
        return c;
    }();
    return g;
}

// The GL object behind each clglmalloc allocation (by host address).
struct GlObjects {
    std::mutex mu;
    std::map<void*, cl_mem> mem;
};
GlObjects& gl_objects()
{
    static GlObjects* g = new GlObjects;
    return *g;
}

bool context_has_gl(CLCONTEXT* cp)
{
    const GlCalls& gl = gl_calls();
    size_t n = 0;
    if (!gl.context_info || gl.context_info(cp->ctx, CL_CONTEXT_PROPERTIES, 0, nullptr, &n) != CL_SUCCESS || n == 0)
        return false;
    std::vector<cl_context_properties> props(n / sizeof(cl_context_properties));
    if (gl.context_info(cp->ctx, CL_CONTEXT_PROPERTIES, n, props.data(), nullptr) != CL_SUCCESS) return false;
    for (size_t i = 0; i + 1 < props.size() && props[i]; i += 2)
        if (props[i] == CL_GL_CONTEXT_KHR) return true;
    return false;
}

bool platform_has_gl_sharing(CLCONTEXT* cp)
{
    size_t n = 0;
    if (clGetPlatformInfo(cp->platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) return false;
    std::string ext(n, '\0');
    if (clGetPlatformInfo(cp->platform, CL_PLATFORM_EXTENSIONS, n, &ext[0], nullptr) != CL_SUCCESS) return false;
    if (ext.find("cl_khr_gl_sharing") != std::string::npos) return true;
    for (const auto& d : cp->devs) {
        n = 0;
        if (clGetDeviceInfo(d.id, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) continue;
        std::string de(n, '\0');
        if (clGetDeviceInfo(d.id, CL_DEVICE_EXTENSIONS, n, &de[0], nullptr) == CL_SUCCESS &&
            de.find("cl_khr_gl_sharing") != std::string::npos)
            return true;
    }
    return false;
}

template <class T> T dev_info(cl_device_id d, cl_device_info what)
{
    T v{};
    clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
    return v;
}

void dev_string(cl_device_id d, cl_device_info what, char (&out)[256])
{
    out[0] = '\0';
    if (clGetDeviceInfo(d, what, sizeof out, out, nullptr) != CL_SUCCESS) out[0] = '\0';
    out[sizeof out - 1] = '\0';
}

const char* type_name(cl_device_type t) { return device_type_name(t).word; }

}  // namespace

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clstat(CLCONTEXT* cp, struct clstat_info* info)
{
    return guarded_int([&] {
        context_check(cp, "clstat");
        if (!info) fail(STDCL_EINVAL, "clstat: info is NULL");
        std::vector<std::shared_ptr<Program>> progs;
        {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            progs = cp->programs;
        }
        cl_uint nkrn = 0;
        for (auto& p : progs) {
            std::lock_guard<std::mutex> lock(p->build_mu);
            nkrn += cl_uint(p->kernels.size());
        }
        info->impid = 0;
        info->ndev = cl_uint(cp->devs.size());
        info->nprg = cl_uint(progs.size());
        info->nkrn = nkrn;
        return 0;
    });
}

STDCL_API int clgetdevinfo(CLCONTEXT* cp, struct cldev_info* info)
{
    return guarded_int([&] {
        context_check(cp, "clgetdevinfo");
        if (!info) fail(STDCL_EINVAL, "clgetdevinfo: info is NULL");
        for (size_t i = 0; i < cp->devs.size(); ++i) {
            cl_device_id id = cp->devs[i].id;
            cldev_info& o = info[i];
            memset(&o, 0, sizeof o);
            o.dev_type = dev_info<cl_device_type>(id, CL_DEVICE_TYPE);
            o.dev_vendor_id = dev_info<cl_uint>(id, CL_DEVICE_VENDOR_ID);
            o.dev_max_core = dev_info<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
            o.dev_max_wi_dim = dev_info<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
            std::vector<size_t> sz(std::max<cl_uint>(o.dev_max_wi_dim, 1), 0);
            clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sz.size() * sizeof(size_t), sz.data(), nullptr);
            o.dev_max_wi_sz_is_symmetric = 1;
            for (size_t k = 0; k < sz.size() && k < 4; ++k) {
                o.dev_max_wi_sz[k] = sz[k];
                if (sz[k] != sz[0]) o.dev_max_wi_sz_is_symmetric = 0;
            }
            o.dev_max_wg_sz = dev_info<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
            o.dev_pref_vec_char = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR);
            o.dev_pref_vec_short = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT);
            o.dev_pref_vec_int = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT);
            o.dev_pref_vec_long = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG);
            o.dev_pref_vec_float = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
            o.dev_pref_vec_double = dev_info<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE);
            o.dev_max_freq = dev_info<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
            o.dev_addr_bits = dev_info<cl_uint>(id, CL_DEVICE_ADDRESS_BITS);
            o.dev_global_mem_sz = dev_info<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
            o.dev_max_mem_alloc_sz = dev_info<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
            o.dev_img_sup = dev_info<cl_bool>(id, CL_DEVICE_IMAGE_SUPPORT);
            o.dev_max_img_args_r = dev_info<cl_uint>(id, CL_DEVICE_MAX_READ_IMAGE_ARGS);
            o.dev_max_img_args_w = dev_info<cl_uint>(id, CL_DEVICE_MAX_WRITE_IMAGE_ARGS);
            o.dev_img2d_max_width = dev_info<size_t>(id, CL_DEVICE_IMAGE2D_MAX_WIDTH);
            o.dev_img2d_max_height = dev_info<size_t>(id, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
            o.dev_img3d_max_width = dev_info<size_t>(id, CL_DEVICE_IMAGE3D_MAX_WIDTH);
            o.dev_img3d_max_height = dev_info<size_t>(id, CL_DEVICE_IMAGE3D_MAX_HEIGHT);
            o.dev_img3d_max_depth = dev_info<size_t>(id, CL_DEVICE_IMAGE3D_MAX_DEPTH);
            o.dev_max_samplers = dev_info<cl_uint>(id, CL_DEVICE_MAX_SAMPLERS);
            o.dev_max_param_sz = dev_info<size_t>(id, CL_DEVICE_MAX_PARAMETER_SIZE);
            o.dev_mem_base_addr_align = dev_info<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
            dev_string(id, CL_DEVICE_NAME, o.dev_name);
            dev_string(id, CL_DEVICE_VENDOR, o.dev_vendor);
            dev_string(id, CL_DEVICE_VERSION, o.dev_version);
            dev_string(id, CL_DRIVER_VERSION, o.dev_drv_version);
            o.dev_local_mem_sz = dev_info<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
        }
        return 0;
    });
}

STDCL_API void clfreport_devinfo(FILE* fp, size_t ndev, struct cldev_info* info)
{
    if (!fp || !info) return;
    for (size_t i = 0; i < ndev; ++i) {
        const cldev_info& d = info[i];
        fprintf(fp, "device %zu: %s\n", i, d.dev_name);
        fprintf(fp, "  vendor: %s (id 0x%x)\n", d.dev_vendor, d.dev_vendor_id);
        fprintf(fp, "  type: %s\n", type_name(d.dev_type));
        fprintf(fp, "  version: %s, driver %s\n", d.dev_version, d.dev_drv_version);
        fprintf(fp, "  compute units: %u at %u MHz\n", d.dev_max_core, d.dev_max_freq);
        fprintf(fp, "  work-item dimensions: %u, sizes %zu %zu %zu, work-group size %zu\n", d.dev_max_wi_dim,
                d.dev_max_wi_sz[0], d.dev_max_wi_sz[1], d.dev_max_wi_sz[2], d.dev_max_wg_sz);
        fprintf(fp, "  global memory: %llu bytes, largest allocation %llu, local memory %llu\n",
                (unsigned long long)d.dev_global_mem_sz, (unsigned long long)d.dev_max_mem_alloc_sz,
                (unsigned long long)d.dev_local_mem_sz);
        fprintf(fp, "  preferred vector widths: char %u short %u int %u long %u float %u double %u\n",
                d.dev_pref_vec_char, d.dev_pref_vec_short, d.dev_pref_vec_int, d.dev_pref_vec_long,
                d.dev_pref_vec_float, d.dev_pref_vec_double);
        fprintf(fp, "  images: %s", d.dev_img_sup ? "yes" : "no");
        if (d.dev_img_sup)
            fprintf(fp, ", 2d up to %zux%zu, 3d up to %zux%zux%zu", d.dev_img2d_max_width, d.dev_img2d_max_height,
                    d.dev_img3d_max_width, d.dev_img3d_max_height, d.dev_img3d_max_depth);
        fprintf(fp, "\n");
    }
}

STDCL_API void* clmemptr(CLCONTEXT* cp, void* ptr)
{
    (void)cp;
    return guarded<void*>(nullptr, [&]() -> void* {
        uintptr_t base = 0;
        size_t size = 0;
        if (!ptr || !registry_lookup(ptr, &base, &size))
            fail(STDCL_ENOENT, "clmemptr: %p is not inside memory returned by clmalloc", ptr);
        return reinterpret_cast<void*>(base);
    });
}

STDCL_API void* clload(CLCONTEXT* cp, void* ptr, size_t len, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clload");
        if (!ptr) fail(STDCL_EINVAL, "clload: the source is NULL");
        if (len == 0) fail(STDCL_EINVAL, "clload: the length is 0");
        std::string text(static_cast<const char*>(ptr), len);
        text.resize(strlen(text.c_str()));  // up to a NUL inside, as the C string it was
        void* h = clsopen(cp, text.c_str(), flags);
        if (!h) {
            std::string why = take_error("clsopen failed");
            fail(STDCL_EBUILD, "clload: %s", why.c_str());
        }
        return h;
    });
}

STDCL_API void* clloadb(CLCONTEXT* cp, int nbin, char** bin, size_t* bin_sz, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clloadb");
        if (flags & ~(CLLD_NOW | CLLD_LAZY | CLLD_GLOBAL))
            fail(STDCL_EINVAL,
                 "clloadb: unsupported flags 0x%x (binaries are built at once; CLLD_NOBUILD is "
                 "not supported)",
                 unsigned(flags));
        if (nbin != int(cp->devs.size()))
            fail(STDCL_EINVAL, "clloadb: %d binaries for the %zu device(s) of %s (one per device)", nbin,
                 cp->devs.size(), cp->label.c_str());
        if (!bin || !bin_sz) fail(STDCL_EINVAL, "clloadb: bin or bin_sz is NULL");
        for (int i = 0; i < nbin; ++i)
            if (!bin[i] || !bin_sz[i]) fail(STDCL_EINVAL, "clloadb: binary %d is NULL or empty", i);
        auto p = std::make_shared<Program>();
        p->cp = cp;
        p->name = "binaries (clloadb)";
        p->unit_names.push_back(p->name);
        p->key = "clloadb:" + std::to_string(reinterpret_cast<uintptr_t>(p.get()));  // never shared
        p->flags = flags;
        std::vector<cl_program> unit(cp->groups.size(), nullptr);
        auto release_unit = [&] {
            for (cl_program q : unit)
                if (q) clReleaseProgram(q);
        };
        for (size_t g = 0; g < cp->groups.size(); ++g) {
            const auto& ids = cp->groups[g];
            std::vector<const unsigned char*> bins;
            std::vector<size_t> sizes;
            for (cl_device_id id : ids)
                for (size_t i = 0; i < cp->devs.size(); ++i)
                    if (cp->devs[i].id == id) {
                        bins.push_back(reinterpret_cast<const unsigned char*>(bin[i]));
                        sizes.push_back(bin_sz[i]);
                    }
            std::vector<cl_int> status(ids.size(), CL_SUCCESS);
            cl_int err = CL_SUCCESS;
            unit[g] = clCreateProgramWithBinary(cp->ctx, cl_uint(ids.size()), ids.data(), sizes.data(), bins.data(),
                                                status.data(), &err);
            if (err != CL_SUCCESS) {
                unit[g] = nullptr;
                release_unit();
                fail_cl(err, "clloadb: clCreateProgramWithBinary");
            }
            {
                BuildStateGuard keep_state;
                err = clBuildProgram(unit[g], cl_uint(ids.size()), ids.data(), "", nullptr, nullptr);
            }
            if (err != CL_SUCCESS) {
                release_unit();
                fail_cl(err, "clloadb: clBuildProgram of the binaries");
            }
        }
        p->cl.push_back(std::move(unit));
        p->built = true;
        std::lock_guard<std::mutex> lock(cp->load_mu);
        cp->programs.push_back(p);
        trace(Trace::load, "clloadb: %d binaries loaded in %s", nbin, cp->label.c_str());
        return p.get();
    });
}

STDCL_API void* clglmalloc(CLCONTEXT* cp, cl_GLuint glbufobj, cl_GLenum target, cl_GLint miplevel, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        constexpr int kinds = CL_MEM_GLBUF | CL_MEM_GLTEX2D | CL_MEM_GLTEX3D | CL_MEM_GLRBUF;
        int kind = flags & kinds;
        if (kind == 0 || (kind & (kind - 1)))
            fail(STDCL_EINVAL,
                 "clglmalloc: flags must hold exactly one of CL_MEM_GLBUF, CL_MEM_GLTEX2D, "
                 "CL_MEM_GLTEX3D and CL_MEM_GLRBUF");
        if (flags & CL_MEM_DETACHED)
            fail(STDCL_EINVAL, "clglmalloc: CL_MEM_DETACHED is not supported (the GL object needs the context)");
        if (flags & ~(kinds | CL_MEM_RW | CL_MEM_RO | CL_MEM_WO))
            fail(STDCL_EINVAL, "clglmalloc: unknown flags 0x%x",
                 unsigned(flags & ~(kinds | CL_MEM_RW | CL_MEM_RO | CL_MEM_WO)));
        context_check(cp, "clglmalloc");
        if (!platform_has_gl_sharing(cp))
            fail(STDCL_ESTATE, "clglmalloc: platform '%s' of %s has no GL sharing (no cl_khr_gl_sharing)",
                 cp->platform_name.c_str(), cp->label.c_str());
        if (!context_has_gl(cp))
            fail(STDCL_ESTATE,
                 "clglmalloc: %s was not made with a GL context (clcontext_create with "
                 "CL_GL_CONTEXT_KHR in ctxprop_ext)",
                 cp->label.c_str());
        const GlCalls& gl = gl_calls();
        if (!gl.mem_info || !gl.from_buffer || !gl.from_renderbuffer || !gl.from_texture || !gl.acquire || !gl.release)
            fail(STDCL_ESTATE, "clglmalloc: the OpenCL library has no GL-sharing entry points");
        cl_mem_flags mf = (flags & CL_MEM_RO) ? CL_MEM_READ_ONLY
            : (flags & CL_MEM_WO)             ? CL_MEM_WRITE_ONLY
                                              : CL_MEM_READ_WRITE;
        cl_int err = CL_SUCCESS;
        ClRef<cl_mem> m(kind == CL_MEM_GLBUF        ? gl.from_buffer(cp->ctx, mf, glbufobj, &err)
                            : kind == CL_MEM_GLRBUF ? gl.from_renderbuffer(cp->ctx, mf, glbufobj, &err)
                                                    : gl.from_texture(cp->ctx, mf, target, miplevel, glbufobj, &err));
        check_cl(err, "clglmalloc: creating the OpenCL object of the GL object");
        size_t size = 0;
        err = gl.mem_info(m.get(), CL_MEM_SIZE, sizeof size, &size, nullptr);
        if (err != CL_SUCCESS || size == 0)
            fail_cl(err ? err : CL_INVALID_GL_OBJECT, "clglmalloc: the GL object's size");
        void* p = clmalloc(cp, size, flags & (CL_MEM_RW | CL_MEM_RO | CL_MEM_WO));
        if (!p) {
            std::string why = take_error("clmalloc failed");
            fail(STDCL_ENOMEM, "clglmalloc: %s", why.c_str());
        }
        auto& g = gl_objects();
        std::lock_guard<std::mutex> lock(g.mu);
        g.mem[p] = m.get();
        m.release();  // g.mem holds it now
        return p;
    });
}

STDCL_API cl_event clglmsync(CLCONTEXT* cp, unsigned int devnum, void* ptr, int flags)
{
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        Device& d = context_device(cp, devnum, "clglmsync");
        int dir = flags & (CL_MEM_GLBUF | CL_MEM_CLBUF);
        if (dir != CL_MEM_GLBUF && dir != CL_MEM_CLBUF)
            fail(STDCL_EINVAL, "clglmsync: flags must hold exactly one of CL_MEM_GLBUF and CL_MEM_CLBUF");
        int ev_flags = flags & ~dir;
        event_flags_check(ev_flags);
        cl_mem m = nullptr;
        {
            auto& g = gl_objects();
            std::lock_guard<std::mutex> lock(g.mu);
            auto it = g.mem.find(ptr);
            if (it != g.mem.end()) m = it->second;
        }
        if (!m) fail(STDCL_ENOENT, "clglmsync: %p was not returned by clglmalloc", ptr);
        size_t off = 0;
        auto alloc = registry_find(ptr, &off);
        if (!alloc || off) fail(STDCL_ENOENT, "clglmsync: %p is not the start of a clmalloc allocation", ptr);
        AllocUse use(std::move(alloc));
        size_t size = use->size;
        const GlCalls& gl = gl_calls();
        // The transfer reads or writes the allocation's host memory: after the
        // pending commands on it (a NOWAIT clmsync to the host, say).
        CommandOrder order(d, devnum, {&*use}, d.queue);
        check_cl(gl.acquire(d.queue, 1, &m, order.count(), order.list(), nullptr),
                 "clglmsync: clEnqueueAcquireGLObjects");
        cl_int err = dir == CL_MEM_GLBUF ? clEnqueueWriteBuffer(d.queue, m, CL_FALSE, 0, size, ptr, 0, nullptr, nullptr)
                                         : clEnqueueReadBuffer(d.queue, m, CL_FALSE, 0, size, ptr, 0, nullptr, nullptr);
        cl_event ev = nullptr;
        cl_int rerr = gl.release(d.queue, 1, &m, 0, nullptr, &ev);
        check_cl(err, "clglmsync: the transfer");
        check_cl(rerr, "clglmsync: clEnqueueReleaseGLObjects");
        order.enqueued(ev, ev_flags);
        CommandTag tag{dir == CL_MEM_GLBUF ? CommandTag::to_device : CommandTag::to_host, nullptr, size, true};
        return event_finish(cp, devnum, ev, ev_flags, tag);
    });
}

STDCL_API void stdcl_ndrange_set4(clndrange_t* ndr, size_t o0, size_t g0, size_t l0, size_t o1, size_t g1, size_t l1,
                                  size_t o2, size_t g2, size_t l2, size_t o3, size_t g3, size_t l3)
{
    if (!ndr) return;
    *ndr = clndrange_t{4, {o0, o1, o2, o3}, {g0, g1, g2, g3}, {l0, l1, l2, l3}};
}

}  // extern "C"
