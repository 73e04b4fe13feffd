// SPDX-License-Identifier: MIT
// sync_check.hpp: which copy of an allocation is current, and the sync-check
// mode, STDCL_CHECK=sync (sync_check.cpp).  For each allocation and device the
// library keeps what that device's copy holds as far as the program's syncs
// say: the content hash of the host bytes last sent to it (clmsync or clmsyncn
// to the device, or brought back from it), or "unknown" once a kernel there may
// have written it.  At a launch, every __global argument whose host bytes differ
// from what the device was last given is a kernel reading a device copy older
// than the host's: a forgotten clmsync(..., CL_MEM_DEVICE).  The bookkeeping is
// the same on a device that works on host memory (zero-copy) as on one with its
// own memory, so a program that passes on a laptop's CPU has no such mistake on
// a GPU.  Off by default; when off none of these is called (no hashing).
#pragma once

#include "kernels/kernel.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace stdcl {

// The mode: STDCL_CHECK holds "sync" (or "all").
bool sync_check_on();

// A new allocation (clmalloc, clmrealloc): where it was made (the caller's return
// address) and what its host memory holds now.
void sync_note_alloc(Allocation& a, void* caller);
// A transfer of bytes [off, off + len) of a between the host and device devnum
// (to_device, or back to the host), enqueued by `call` at caller; waited: the
// transfer has completed (a NOWAIT one to the host is noted when it is known).
void sync_note_transfer(Allocation& a, unsigned devnum, size_t off, size_t len, bool to_device, bool waited,
                        const char* call, void* caller);
// A command on device devnum (a kernel, clmcopy's copy) may change a's copy
// there from byte `from` on; writer says which, for the reports.
// Only len bytes from there when len is given (a foreign command's use).
// maybe: the command may write them, or not (a launch's whole argument, its
// words not seen): SyncDevice::epoch_maybe.
void sync_note_device_write(Allocation& a, unsigned devnum, size_t from, std::string writer, size_t len = SIZE_MAX,
                            bool maybe = false);
// Before a call enqueues commands: judges the program's accesses to protected
// pages recorded since (host reads of results never brought back).  With the
// action "error" a finding is this call's error (STDCL_ESYNC).
void sync_check_before(const char* call);
// Before a transfer of bytes [off, off + len) of a with device devnum is
// enqueued: sync_check_before, then, for a transfer back to the host, host
// changes it would overwrite unread (a lost update: the host changed bytes
// after they were last synced with that device, and no kernel wrote them since),
// and a transfer that races one still pending on another device (not joined by
// clwait or a waiting call): an upload of bytes a transfer back still writes,
// or a transfer back over bytes another transfer still reads or writes.
void sync_check_transfer(Allocation& a, unsigned devnum, size_t off, size_t len, bool to_device, const char* call,
                         void* caller);
// A CL_EVENT_NOWAIT command ev that uses bytes [off, off + len) of a on device
// devnum: a transfer to the device (reads the host memory) or back (writes
// it), or a kernel that reads but cannot write it.  Until ev is seen complete
// (sync_settle), host writes to those pages (and, for a transfer back, reads)
// are findings: the command may see them or not.
// transfer: ev is a transfer (else a kernel); site: the program's call.
void sync_note_pending(Allocation& a, unsigned devnum, size_t off, size_t len, bool host_written, bool transfer,
                       cl_event ev, std::string what, void* site);
// Before kernel ki's NOWAIT launch ev is tracked: notes its read-only arguments
// (sync_note_pending).
void sync_note_pending_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, cl_event ev, const char* call,
                              void* caller);
// After `call` waited for commands on device devnum (-1: every device):
// judges what was recorded while they were pending (sync_check_before), then
// forgets that device's pending commands now complete and gives their pages
// back.  Another device's command stays pending, complete or not: the program
// has not waited for it (a transfer that races it is still one).
void sync_settle(const char* call, int devnum);
// CL_MEM_NOFORCE: whether a transfer of bytes [off, off + len) with device
// devnum would move nothing new (the device's copy and the host's agree there,
// as the hashes say).  For a transfer to the device that is not skipped, the
// same answer is the profile's "sent, already there".
bool sync_transfer_unneeded(Allocation& a, unsigned devnum, size_t off, size_t len);
// Before a's memory is released: judges what is recorded (a finding is
// reported, never an error: clfree frees) and stops watching a.
void sync_note_free(Allocation& a);
// An argument a kernel may read whose copy on the device may be older than the
// host's, or never given a value, in the bytes `spans` (offsets in the
// allocation; each a byte range whose host bytes changed since the device last
// had them, or that the device never got): whether the kernel's results depend
// on them is sync_probe_launch's to find out.
struct SyncSuspect {
    unsigned arg;
    std::vector<std::pair<size_t, size_t>> spans;  // (offset, length)
    std::vector<int> src;  // per span: where its newest bytes are (-1: the host; k: device k)
    unsigned kind;  // sync::stale or sync::never_sent
    std::string finding;  // "whose copy on device 0 is older than ..."
    std::string fix;  // the call that sends what is missing, or empty where no single call does
};

// Before kernel ki is launched on device devnum by `call` at caller, with its
// arguments set: finds each __global argument the kernel may read whose copy
// there holds bytes older than the host's or never given a value (suspects,
// for sync_probe_launch), then notes the ones it may write (those with
// suspects are noted by the probe, which sees what the kernel writes).
void sync_check_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const char* call, void* caller,
                       std::vector<SyncSuspect>* suspects);
// Before the launch proper of kernel ki on device devnum (its arguments bound,
// earlier commands enqueued): whether the kernel's results depend on the
// suspect bytes.  Bytes where the device's copy holds what the host holds are
// no suspects.  Otherwise it runs the kernel (run(): enqueue it once) twice as
// it is, then once per suspect argument with those bytes of its device copy
// replaced by the host's, each from the state before the launch, which it
// then puts back: results that differ are a finding (the kernel reads bytes
// older than the host's, or never sent), reported once per allocation and
// kind, on standard error, or with the action "error" as the launch's error
// (STDCL_ESYNC).  A kernel whose results vary from run to run is not judged.
// mem_of(i): the device object argument i is bound to.  The program's memory
// ends as it was: the launch proper runs on it.
void sync_probe_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const std::vector<SyncSuspect>& suspects,
                       const std::function<cl_mem(unsigned)>& mem_of, const std::function<cl_int()>& run,
                       const char* call, void* caller);
// Foreign commands (clforeign_begin at caller): uses[use] reads bytes [from,
// from + len) of a on device devnum (a copy never sent or older than the
// host's is a finding, as for a kernel's const argument); a command writes them.
void sync_check_foreign_read(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len, size_t use,
                             const char* call, void* caller);
void sync_note_foreign_write(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len,
                             const char* call, void* caller);
// A command of the library's own (clsort...: `who`) reads bytes [from, from +
// len) of a on device devnum, named `what` ("its keys"); `by` and call at caller
// say where it came from ("called by").  Findings as sync_check_foreign_read's.
void sync_check_command_read(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len,
                             const std::string& who, const std::string& what, const std::string& by,
                             const char* call, void* caller);
// a's device object on device devnum was handed out by stdcl_mem: commands the
// check does not see (plain OpenCL on stdcl_queue's queue or the program's own,
// not announced) may change its copy there.  Reads the copy back (after the
// device's queues finish) and compares it, page by page, with what it held
// when the check last saw it: the pages that changed count as written there by
// such a command (no finding for reading them on the device; the host reading
// them before bringing them back is one; an upload over them is a lost
// update).  Called when stdcl_mem hands the object out and before each command
// of the library's that uses a on devnum; does nothing for other memory.
void sync_refresh_unseen(Allocation& a, unsigned devnum);
// A transfer back by call at caller of a, whose device object stdcl_mem handed
// out and on which no foreign command was announced: lost updates are not
// checked for it (commands not seen may change it), reported once, as a note.
void sync_note_unchecked(Allocation& a, const char* call, void* caller);

}  // namespace stdcl
