// SPDX-License-Identifier: MIT
// core.hpp: every owner's header, for the sources that use most of them.  Each
// header says which source owns what it declares:
//   context.hpp  devices and contexts
//   memory.hpp   allocations, registry, guard zones, command order
//   kernel.hpp   kernel records, arguments, locks, work-group limits
//   program.hpp  programs (clopen, clsopen)
//   events.hpp   event flags, command completion, the profile
#pragma once

#include "internal/context.hpp"
#include "internal/events.hpp"
#include "internal/kernel.hpp"
#include "internal/memory.hpp"
#include "internal/program.hpp"
