# SPDX-License-Identifier: MIT
# Makefile: builds libstdcl, its tools, tests, examples and benchmarks into
# build/, mirroring the source tree.  Non-recursive; the machine-specific
# settings come from config.mk, which configure writes (this Makefile runs
# autoconf and ./configure itself when config.mk is missing or configure.ac,
# config.mk.in, stdcl.pc.in changed; for `make run` and `make check` it runs
# tools/install_deps.sh first).
#
#   make [all]      library, tools, tests, examples, benchmarks (not CUDA),
#                   and with a Fortran compiler the module stdcl in
#                   libstdcl_fortran, its tests and examples (make fortran)
#   make check      all, then tools/run_tests.sh (every tests/test_*.c program,
#                   tests/check_exports.sh, tests/check_man.sh,
#                   tests/check_run_tests.sh and a stride of check-faults);
#                   `make check T=test_x F='pat*'` runs one
#                   program, with a CMocka test-name filter
#   make check-faults
#                   the fault-injection sweep (tools/check_faults.sh): the
#                   workload tests/faults/fault_workload.c under the preloaded
#                   shim tests/faults/faultcl_shim.cpp, failing each OpenCL
#                   call and each allocation libstdcl makes in turn, in both
#                   memory modes (make check runs a stride of it)
#   make check-gpu  on a machine with an OpenCL GPU: tools/check_gpu.sh (the
#                   ordering scenarios, test_stress, every example's --check
#                   and the STDCL 1.6 programs of tests/compat on stdgpu,
#                   compiled in the process and from the program cache)
#   make check-sync-model  the sync check against its reference model over
#                   COUNT generated programs from SYNC_SEED on up to
#                   SYNC_DEVICES devices (default 2), in both memory modes
#                   (tests/sync_model.py); prints each disagreement
#   make run        all, then RUN_CMD (below) in the test environment
#   make stress     tests/test_stress.c (16 threads, a random mix of every
#                   call, all results checked; zero-copy and copy mode) for
#                   SECONDS seconds each (default 60; make check runs it
#                   for 3); THREADS=n, SEED=s (printed by every run) replay
#   make asan | tsan | ubsan | asan-ubsan
#                   rebuilds the library, tools and tests with that sanitizer
#                   (asan-ubsan: both) into build-asan/ (...) and runs the
#                   tests there
#   make bench      the benchmark programs (bench/*.c, bench/*.cpp)
#   make fuzz       the libFuzzer targets of tests/fuzz (tests/fuzz/README;
#                   needs clang++ with libFuzzer), each for SECONDS seconds
#                   (default 60); fails if one finds a crash (make check
#                   runs each for 5, or says it skips them without clang)
#   make bench-cuda bench/*.cu with nvcc, when configure found it
#   make install    PREFIX=/usr/local DESTDIR= (header, libstdcl.so.X.Y.Z and
#                   its soname links, libstdcl.a, stdcl.pc, the CMake package
#                   (lib/cmake/stdcl: find_package(stdcl)), tools, and the
#                   manual pages under $(PREFIX)/share/man: `man stdcl`;
#                   with Fortran also libstdcl_fortran, the module stdcl
#                   and stdcl-fortran.pc)
#   make uninstall  removes what install wrote (same PREFIX and DESTDIR)
#   make check-abi  the library's ABI against tests/abi/ (abidiff; docs/abi.md)
#   make dist       libstdcl-VERSION.tar.gz (git ls-files and configure);
#                   distcheck: that tarball alone configures, builds,
#                   passes make check, installs and uninstalls
#   make deb        the Debian packages (debian/) in build/deb, lintian-checked
#   make clean      removes build*/; distclean also the configure outputs
#
# Options: WERROR=1 (warnings are errors); CONFIGURE_FLAGS='--prefix=/opt/x'
# for the automatic configure run; BUILD=dir (build folder, default build);
# BENCH_OPT (default -O3), NVCCFLAGS (default -O3); STDCL_SKIP_DEPS=1 (in
# the environment: no package check).
#
# Sources are found by wildcard, so new files need no edit here:
#   libstdcl/<owner>/*.cpp   the library, a folder per owner (HACKING.md),
#                            each with its private headers
#   src/<tool>.c|.cpp        build/bin/<tool> (linked with libstdcl.a instead
#                            of libstdcl.so if it includes ../libstdcl/)
#   tests/test_*.c           build/tests/test_* (CMocka, one program per area)
#   tests/helper_*.c         build/tests/helper_* (programs the tests spawn)
#   examples/<name>/*.c|.cpp build/examples/<name>/<name>: every source of the
#                            folder linked into one program.  A folder holding
#                            several programs lists them in a file PROGRAMS,
#                            one per line, `prog: file1.c file2.c` (names
#                            relative to the folder; # starts a comment).
#                            A .cl file among them is embedded in the
#                            program with build/bin/clcc (`prog: prog.c k.cl`).
#                            Sources may lie in another example folder
#                            (`prog: prog.c ../nbody/nbody_common.c`): their
#                            folder is added to the include path.  A folder
#                            named *_mpi holds MPI programs: compiled and
#                            linked with $(MPICC), built only when configure
#                            found MPI (HAVE_MPI=1).
#   docs/man/manN/*.N        manual pages (man(7) macros; a page of a family
#                            of calls, and a one-line `.so man3/page.3` link
#                            for each other name), installed as they are
#   bench/<name>.c|.cpp      build/bench/<name>; bench/<name>.cu only with
#                            `make bench-cuda`
# The kernel files of each examples/ folder (*.cl, *.clh and *.h, which
# kernels may include) and tests/*.cl are copied next to the programs; `make
# run` and the tests run from that folder.  Library objects are compiled
# with -fPIC -fvisibility=hidden, and the link exports exactly the STDCL_API
# names of include/stdcl.h and include/stdcl_cache.h (a version script
# made from the headers).

# What `make run` runs (a shell command, from the top of the tree).
RUN_CMD = cd $(BUILD)/examples/nbody && ./nbody_multi --check && ./nbody_multi -n 16384 -s 600 --png nbody.png && echo "picture: $(BUILD)/examples/nbody/nbody.png"

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:
# Keep the object files that pattern-rule chains make (tools, tests).
.SECONDARY:
# Without -j on the command line, one job per core: a plain `make check` or
# `make run` builds in half the time on 2 cores.  make -j1 builds one thing
# at a time.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2> /dev/null || echo 1)
endif

BUILD ?= build

# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------
# clean and distclean must work without (and must not create) config.mk.
NOCONFIG_GOALS := clean distclean
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
include config.mk
endif
# Until config.mk exists (make reads this file once before configuring).
PACKAGE_VERSION ?= 0.0.0
STDCL_MAJOR ?= 0

# tools/install_deps.sh installs missing Debian packages (as root) or prints
# the command to (otherwise).  Only `make run` and `make check` call it: every
# other target (all, install, dist, a package build) touches nothing outside
# the tree.  When it cannot install, the build goes on: configure stops if
# something essential is missing, and says what.  STDCL_SKIP_DEPS=1 skips it.
ifneq ($(filter run check,$(MAKECMDGOALS)),)
INSTALL_DEPS = sh tools/install_deps.sh || \
    echo "warning: tools/install_deps.sh failed; trying to build anyway" >&2
else
INSTALL_DEPS = :
endif

# --force: autom4te's cache keys on configure.ac alone, and would keep the
# version AC_INIT read from VERSION before it changed.
configure: configure.ac VERSION
	@$(INSTALL_DEPS)
	autoconf --force
	@touch $@

# Re-running keeps the options of the last ./configure (config.status).
config.mk: configure config.mk.in stdcl.pc.in stdcl-fortran.pc.in include/stdcl_version.h.in VERSION
	@$(INSTALL_DEPS)
	@if [ -f config.status ]; then \
	    echo "./config.status --recheck && ./config.status"; \
	    ./config.status --recheck && ./config.status; \
	else \
	    echo "./configure $(CONFIGURE_FLAGS)"; \
	    ./configure $(CONFIGURE_FLAGS); \
	fi
	@touch $@

# Written by the same configure run; recreated if deleted.
stdcl.pc stdcl-fortran.pc include/stdcl_version.h: | config.mk
	./config.status $@

# --------------------------------------------------------------------------
# Flags
# --------------------------------------------------------------------------
WARN := -Wall -Wextra
ifeq ($(WERROR),1)
WARN += -Werror
endif
DEPFLAGS := -MMD -MP
# SAN_FLAGS is set by the asan/tsan/ubsan targets for their sub-make.
SAN_FLAGS ?=

ALL_CPPFLAGS = -Iinclude $(OPENCL_CFLAGS) $(NETTLE_CFLAGS) $(CPPFLAGS)
LIB_CXXFLAGS = $(CXXSTD) -fPIC -fvisibility=hidden -fvisibility-inlines-hidden \
               $(LIB_TLSFLAGS) -pthread $(WARN) $(CXXFLAGS) $(SAN_FLAGS)
PROG_CFLAGS = $(CSTD) -pthread $(WARN) $(CFLAGS) $(SAN_FLAGS)
PROG_CXXFLAGS = $(CXXSTD) -pthread $(WARN) $(CXXFLAGS) $(SAN_FLAGS)
# Extra flags of some folders (pattern-specific values below).
DIR_CPPFLAGS =
DIR_CFLAGS =

# Programs link with the shared library and find it at run time through
# their rpath, $ORIGIN/ and the way up to build/ then lib: ../lib for
# build/bin/tool (and bin/tool once installed), ../../lib for
# build/examples/name/prog.
empty :=
space := $(empty) $(empty)
rpath_up = $(subst $(space),,$(patsubst %,../,$(subst /, ,$(patsubst $(BUILD)/%,%,$(@D)))))
PROG_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS) -pthread -L$(BUILD)/lib \
               -Wl,-rpath,'$$ORIGIN/$(rpath_up)lib'
PROG_LIBS = -lstdcl $(OPENCL_LIBS) -lm -lpthread $(LIBS)

# A sanitized shared library has undefined sanitizer symbols by design.
ifeq ($(strip $(SAN_FLAGS)),)
LIB_NOUNDEF := -Wl,--no-undefined
endif

# --------------------------------------------------------------------------
# The library
# --------------------------------------------------------------------------
LIB_SRCS := $(wildcard libstdcl/*/*.cpp)
LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/%.o)
# The primitives' kernels: OpenCL C files (libstdcl/primitives/cl) put into the
# library as string constants, their includes inlined (tools/embed_cl.sh).
PRIM_CL_DIR := libstdcl/primitives/cl
PRIM_CL_FILES := $(wildcard $(PRIM_CL_DIR)/*.cl $(PRIM_CL_DIR)/*.h)
PRIM_CL_CPP := $(BUILD)/gen/primitives/prims_cl_text.cpp
LIB_OBJS += $(PRIM_CL_CPP:.cpp=.o)
SONAME = libstdcl.so.$(STDCL_MAJOR)
LIB_REAL = $(BUILD)/lib/libstdcl.so.$(PACKAGE_VERSION)
LIB_SONAME_LINK = $(BUILD)/lib/$(SONAME)
LIB_SO = $(BUILD)/lib/libstdcl.so
LIB_A = $(BUILD)/lib/libstdcl.a
LIB_MAP = $(BUILD)/lib/libstdcl.map
LIB_PC = $(BUILD)/pkgconfig/stdcl.pc

LIB_CLELF = $(BUILD)/lib/libclelf.so
BUILD_HEADERS = $(BUILD)/include/stdcl.h $(BUILD)/include/stdcl_version.h $(BUILD)/include/clvector.h \
                $(BUILD)/include/clmulti_array.h $(BUILD)/include/stdcl.hpp $(BUILD)/include/clmalloc_allocator.h \
                $(BUILD)/include/clete.h

.PHONY: lib
lib: $(LIB_REAL) $(LIB_SONAME_LINK) $(LIB_SO) $(LIB_A) $(LIB_PC) $(LIB_CLELF) $(BUILD_HEADERS)

# Kernels that include <stdcl.h> get -I the header folder found from the loaded
# library at run time (libstdcl/extras/compat.cpp): <library's folder>/INCLUDE_FROM_LIB,
# the relative path from libdir to includedir (../include, or ../../include for
# a multiarch libdir), so an installed tree can move; then <library's
# folder>/../include (build/include holds copies of the headers for the
# uninstalled tree); then the configured includedir.
INCLUDE_FROM_LIB := $(shell realpath -m --relative-to='$(libdir)' '$(includedir)' 2>/dev/null || echo ../include)
LIB_DEFS =
$(BUILD)/libstdcl/programs/loader.o: LIB_DEFS = -DSTDCL_INCLUDEDIR='"$(includedir)"' -DSTDCL_INCLUDE_FROM_LIB='"$(INCLUDE_FROM_LIB)"'

$(BUILD)/libstdcl/%.o: libstdcl/%.cpp | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) $(LIB_DEFS) -Ilibstdcl $(LIB_CXXFLAGS) -c $< -o $@

$(PRIM_CL_CPP): $(PRIM_CL_FILES) tools/embed_cl.sh
	@mkdir -p $(@D)
	sh tools/embed_cl.sh $@ $(PRIM_CL_DIR) kScanCl=scan.cl kSortCl=sort.cl kReduceCl=reduce.cl

$(PRIM_CL_CPP:.cpp=.o): $(PRIM_CL_CPP)
	$(CXX) $(LIB_CXXFLAGS) -c $< -o $@

# libclelf: STDCL 1.6 programs link -lclelf; a linker script that names libstdcl.
$(LIB_CLELF): Makefile
	@mkdir -p $(@D)
	echo '/* GNU ld script: libclelf, the link name of STDCL 1.6 programs; everything is in libstdcl */' > $@
	echo 'INPUT(-lstdcl)' >> $@

# The version script exports exactly the names declared STDCL_API: hidden
# visibility alone still exports the std:: template code the library
# instantiates.  The names of release 1.0 (tools/STDCL_1.0.names) carry the
# symbol version STDCL_1.0; those of 1.1 (tools/STDCL_1.1.names), STDCL_1.1;
# the names added since, STDCL_1.2; each node inherits the one before
# (docs/abi.md).  tests/check_exports.sh checks the result.
API_HEADERS = include/stdcl.h include/stdcl_cache.h
$(LIB_MAP): $(API_HEADERS) tools/api_symbols.sh tools/STDCL_1.0.names tools/STDCL_1.1.names Makefile
	@mkdir -p $(@D)
	sh tools/api_symbols.sh $(API_HEADERS) > $@.names
	grep -v '^#' tools/STDCL_1.0.names > $@.old
	grep -v '^#' tools/STDCL_1.1.names > $@.v11
	{ echo 'STDCL_1.0 {'; echo '  global:'; \
	  grep -Fx -f $@.old $@.names | sed 's/.*/    &;/'; \
	  echo '  local: *;'; echo '};'; \
	  echo 'STDCL_1.1 {'; echo '  global:'; \
	  grep -Fx -f $@.v11 $@.names | sed 's/.*/    &;/'; \
	  echo '} STDCL_1.0;'; \
	  echo 'STDCL_1.2 {'; echo '  global:'; \
	  grep -Fvx -f $@.old $@.names | grep -Fvx -f $@.v11 | sed 's/.*/    &;/'; \
	  echo '} STDCL_1.1;'; } > $@
	rm -f $@.names $@.old $@.v11

$(LIB_REAL): $(LIB_OBJS) $(LIB_MAP)
	@mkdir -p $(@D)
	$(CXX) -shared $(LIB_CXXFLAGS) $(LDFLAGS) -Wl,-soname,$(SONAME) \
	    -Wl,--version-script=$(LIB_MAP) -Wl,--exclude-libs,ALL $(LIB_NOUNDEF) \
	    -o $@ $(LIB_OBJS) $(OPENCL_LIBS) $(NETTLE_LIBS) -lpthread -ldl $(LIBS)

$(LIB_SONAME_LINK): $(LIB_REAL)
	ln -sf $(notdir $<) $@

$(LIB_SO): $(LIB_SONAME_LINK)
	ln -sf $(notdir $<) $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# stdcl.pc for the uninstalled tree: PKG_CONFIG_PATH=$PWD/build/pkgconfig
# lets an example's own Makefile build against build/.
$(LIB_PC): stdcl.pc
	@mkdir -p $(@D)
	sed -e 's|^prefix=.*|prefix=$(CURDIR)|' \
	    -e 's|^libdir=.*|libdir=$(CURDIR)/$(BUILD)/lib|' \
	    -e 's|^includedir=.*|includedir=$(CURDIR)/include|' $< > $@

# --------------------------------------------------------------------------
# Object files of the programs (tools, tests, examples, benchmarks)
# --------------------------------------------------------------------------
$(BUILD)/%.o: %.c | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CPPFLAGS) $(DIR_CPPFLAGS) $(PROG_CFLAGS) $(DIR_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cpp | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) $(DIR_CPPFLAGS) $(PROG_CXXFLAGS) $(DIR_CFLAGS) -c $< -o $@

# Kernels and the headers they include run from next to the programs.
$(BUILD)/%.cl: %.cl
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/%.clh: %.clh
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/%.h: %.h
	@mkdir -p $(@D)
	cp $< $@
$(BUILD)/include/%.hpp: include/%.hpp
	@mkdir -p $(@D)
	cp $< $@

# Links $@ from the object files among its prerequisites, with the C++
# driver when one of them came from C++.
LINK_PROG = $(if $(filter $(CXX_OBJS),$^),$(CXX),$(CC)) $(PROG_LDFLAGS) \
            -o $@ $(filter %.o,$^) $(PROG_LIBS)
CXX_OBJS = $(patsubst %.cpp,$(BUILD)/%.o,$(wildcard src/*.cpp tests/*.cpp tests/compat/stdcl16/*/*.cpp tests/compat/cxx/*.cpp \
           examples/*/*.cpp bench/*.cpp))

# --------------------------------------------------------------------------
# Tools: src/<tool>.c|.cpp -> build/bin/<tool>
# --------------------------------------------------------------------------
TOOL_SRCS := $(wildcard src/*.c src/*.cpp)
TOOLS := $(addprefix $(BUILD)/bin/,$(basename $(notdir $(TOOL_SRCS))))

.PHONY: tools
tools: $(TOOLS)

$(BUILD)/bin/%: $(BUILD)/src/%.o $(LIB_SO)
	@mkdir -p $(@D)
	$(LINK_PROG)

# A tool that includes the library's internal headers (../libstdcl/<owner>/)
# needs symbols the shared library does not export: it links the static
# archive instead (only the archive members it uses).
TOOLS_INTERNAL := $(addprefix $(BUILD)/bin/,$(basename $(notdir \
    $(shell grep -l '"\.\./libstdcl/' $(TOOL_SRCS) /dev/null 2>/dev/null))))
$(TOOLS_INTERNAL): $(LIB_A)
$(TOOLS_INTERNAL): PROG_LIBS = $(LIB_A) $(OPENCL_LIBS) $(NETTLE_LIBS) -lm -lpthread -ldl $(LIBS)

# stdcl-cache reads and writes the program cache only: it links the cache's own
# objects instead of the library, so it makes no OpenCL context and needs no
# OpenCL platform.
CACHE_TOOL_OBJS := $(addprefix $(BUILD)/libstdcl/,builds/cache_api.o builds/cache_store.o builds/cache_entry.o helpers/digest.o \
                   helpers/fsutil.o config/config.o helpers/diag.o helpers/calls.o)
$(BUILD)/bin/stdcl-cache: $(CACHE_TOOL_OBJS)
$(BUILD)/bin/stdcl-cache: PROG_LIBS = $(NETTLE_LIBS) -lpthread $(LIBS)

# --------------------------------------------------------------------------
# Tests: tests/test_*.c and tests/helper_*.c -> build/tests/
# --------------------------------------------------------------------------
TEST_PROGS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TEST_HELPERS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/helper_*.c))
TEST_DATA := $(addprefix $(BUILD)/,$(wildcard tests/*.cl tests/*.clh))

$(BUILD)/tests/%.o: DIR_CFLAGS = $(CMOCKA_CFLAGS)

$(TEST_PROGS) $(TEST_HELPERS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB_SO)
	$(LINK_PROG) $(CMOCKA_LIBS)

# Fault injection (tools/check_faults.sh): tests/faults/faultcl_shim.cpp, a
# preloaded interposer (never sanitized: it stands in front of the sanitizer
# runtime's malloc), and tests/faults/fault_workload.c, linked with
# LeakSanitizer (or the build's sanitizer) so a leak ends the run in a report.
FAULT_SHIM = $(BUILD)/tests/faults/faultcl_shim.so
FAULT_WORKLOAD = $(BUILD)/tests/faults/fault_workload
FAULT_PROGS = $(FAULT_SHIM) $(FAULT_WORKLOAD)
FAULT_LEAK_FLAGS = $(if $(strip $(SAN_FLAGS)),,-fsanitize=leak)

$(FAULT_SHIM): tests/faults/faultcl_shim.cpp
	@mkdir -p $(@D)
	$(CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) $(CXXSTD) -fPIC -shared -pthread $(WARN) $(CXXFLAGS) \
	    -fno-omit-frame-pointer -o $@ $< -ldl

$(FAULT_WORKLOAD): $(BUILD)/tests/faults/fault_workload.o $(LIB_SO)
	$(LINK_PROG) $(FAULT_LEAK_FLAGS) -ldl

# The ordering fuzzer (tests/order/README): a preloaded interposer that holds
# every enqueued command behind a user event released after a random delay.
# Never sanitized, like the fault shim.
ORDER_SHIM = $(BUILD)/tests/order/ordercl_shim.so

$(ORDER_SHIM): tests/order/ordercl_shim.cpp
	@mkdir -p $(@D)
	$(CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) $(CXXSTD) -O2 -fPIC -shared -pthread $(WARN) -o $@ $< -ldl

# Everything the tests use, tools included (a test may run one).
.PHONY: tests
ifeq ($(HAVE_CMOCKA),1)
tests: lib tools $(TEST_PROGS) $(TEST_HELPERS) $(TEST_DATA) $(FAULT_PROGS) $(ORDER_SHIM)
else
tests: lib tools
	@echo "warning: CMocka not found by configure: tests not built (run tools/install_deps.sh, then rm config.mk)" >&2
endif

# --------------------------------------------------------------------------
# Examples: examples/<name>/ -> build/examples/<name>/<program>
# --------------------------------------------------------------------------
EXAMPLE_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard examples/*/*.c \
                examples/*/*.cpp examples/*/PROGRAMS))))
MPI_EXAMPLE_DIRS := $(filter %_mpi,$(EXAMPLE_DIRS))
ifneq ($(HAVE_MPI),1)
EXAMPLE_DIRS := $(filter-out $(MPI_EXAMPLE_DIRS),$(EXAMPLE_DIRS))
endif
# examples/blas uses CLBlast and examples/fft clFFT: built only when configure
# found them (HAVE_CLBLAST=1, HAVE_CLFFT=1).
ifneq ($(HAVE_CLBLAST),1)
EXAMPLE_DIRS := $(filter-out examples/blas,$(EXAMPLE_DIRS))
endif
ifneq ($(HAVE_CLFFT),1)
EXAMPLE_DIRS := $(filter-out examples/fft,$(EXAMPLE_DIRS))
endif
EXAMPLES :=
comma := ,

# The object of a source: x.c, x.cpp -> x.o; x.cl (embedded) -> x_cl.o.
example_objs = $(patsubst %.cl,%_cl.o,$(patsubst %.c,%.o,$(patsubst %.cpp,%.o,$(1))))
# Sources relative to a folder, as paths from the top ("a/../b/x.c" -> "b/x.c").
example_srcs = $(patsubst $(CURDIR)/%,%,$(abspath $(addprefix $(1)/,$(2))))

# $(call example_program,folder,program,sources relative to the folder)
define example_program
EXAMPLES += $(BUILD)/$(strip $(1))/$(strip $(2))
$(BUILD)/$(strip $(1))/$(strip $(2)): \
    $(addprefix $(BUILD)/,$(call example_objs,$(call example_srcs,$(1),$(3)))) \
    $(addprefix $(BUILD)/,$(wildcard $(1)/*.cl $(1)/*.clh $(1)/*.h)) $(LIB_SO)
EXAMPLE_INC_$(strip $(1)) += $(addprefix -I,$(filter-out $(1),$(patsubst %/,%,\
    $(dir $(call example_srcs,$(1),$(3))))))
endef

# A PROGRAMS line `prog: a.c b.c` becomes the word prog=a.c,b.c.
example_lines = $(shell sed -e 's/\#.*//' -e '/:/!d' \
    -e 's/[[:space:]]*:[[:space:]]*/=/' -e 's/^[[:space:]]*//' \
    -e 's/[[:space:]]*$$//' -e 's/[[:space:]][[:space:]]*/,/g' $(1)/PROGRAMS)
# The STDCL 1.6 style programs (tests/compat/stdcl16/<name>/, and the C++
# containers' checks in tests/compat/cxx/, run by test_compat and test_clete)
# are built the same way, from their PROGRAMS files, with the project's
# warnings.
# tests/compat/<name>_mpi/ holds MPI programs (run by test_mpi): built with
# $(MPICC), and only when configure found MPI, as examples/*_mpi.
COMPAT_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard tests/compat/stdcl16/*/PROGRAMS tests/compat/cxx/PROGRAMS \
                tests/compat/*_mpi/PROGRAMS))))
MPI_COMPAT_DIRS := $(filter %_mpi,$(COMPAT_DIRS))
ifneq ($(HAVE_MPI),1)
COMPAT_DIRS := $(filter-out $(MPI_COMPAT_DIRS),$(COMPAT_DIRS))
endif
$(foreach d,$(EXAMPLE_DIRS) $(COMPAT_DIRS),$(if $(wildcard $(d)/PROGRAMS),\
    $(foreach l,$(call example_lines,$(d)),$(eval $(call example_program,$(d),\
        $(word 1,$(subst =, ,$(l))),$(subst $(comma), ,$(word 2,$(subst =, ,$(l))))))),\
    $(eval $(call example_program,$(d),$(notdir $(d)),\
        $(notdir $(wildcard $(d)/*.c $(d)/*.cpp))))))

# Examples and benchmarks may use libpng (HAVE_PNG) and OpenMP (_OPENMP).
ifeq ($(HAVE_PNG),1)
PNG_DEFS = -DHAVE_PNG=1 $(PNG_CFLAGS)
PNG_LINK = $(PNG_LIBS)
endif
$(BUILD)/examples/%.o: DIR_CPPFLAGS = $(PNG_DEFS)
$(BUILD)/examples/%.o: DIR_CFLAGS = $(OPENMP_CFLAGS)
$(foreach d,$(EXAMPLE_DIRS),$(if $(EXAMPLE_INC_$(d)),\
    $(eval $(BUILD)/$(d)/%.o: DIR_CPPFLAGS = $$(PNG_DEFS) $$(sort $$(EXAMPLE_INC_$(d))))))
# MPI programs: compiled and linked with mpicc (`private`: the objects of
# other folders they use are compiled as usual).
$(foreach d,$(filter $(MPI_EXAMPLE_DIRS),$(EXAMPLE_DIRS)) $(filter $(MPI_COMPAT_DIRS),$(COMPAT_DIRS)),\
    $(eval $(BUILD)/$(d)/%: private CC = $$(MPICC)))
# CLBlast's and clFFT's flags for their folder's objects, libraries for its program.
$(BUILD)/examples/blas/%.o: DIR_CPPFLAGS += $(CLBLAST_CFLAGS)
$(BUILD)/examples/blas/blas: private PROG_LIBS += $(CLBLAST_LIBS)
$(BUILD)/examples/fft/%.o: DIR_CPPFLAGS += $(CLFFT_CFLAGS)
$(BUILD)/examples/fft/fft: private PROG_LIBS += $(CLFFT_LIBS)

# The STDCL 1.6 style programs link as COPRTHR's Makefiles do, through
# -lclelf (the linker script that names libstdcl), without -lstdcl.
STDCL16_PROGS := $(filter $(BUILD)/tests/compat/stdcl16/%,$(EXAMPLES))
$(STDCL16_PROGS): $(LIB_CLELF)
$(STDCL16_PROGS): private PROG_LIBS = -lclelf $(OPENCL_LIBS) -lm -lpthread $(LIBS)

$(EXAMPLES):
	$(LINK_PROG) $(OPENMP_CFLAGS) $(PNG_LINK)

# A .cl file named among a program's sources in PROGRAMS is embedded in the
# program: build/bin/clcc makes it an object (its #includes inlined; -MD
# records them), and clopen(cp, NULL, flags) finds it at run time.
$(BUILD)/examples/%_cl.o: examples/%.cl $(BUILD)/bin/clcc
	@mkdir -p $(@D)
	$(BUILD)/bin/clcc -c -MD --cc '$(CC) $(SAN_FLAGS)' -o $@ $<
$(BUILD)/tests/compat/stdcl16/%_cl.o: tests/compat/stdcl16/%.cl $(BUILD)/bin/clcc
	@mkdir -p $(@D)
	$(BUILD)/bin/clcc -c -MD --cc '$(CC) $(SAN_FLAGS)' -o $@ $<
$(BUILD)/tests/compat/cxx/%_cl.o: tests/compat/cxx/%.cl $(BUILD)/bin/clcc
	@mkdir -p $(@D)
	$(BUILD)/bin/clcc -c -MD --cc '$(CC) $(SAN_FLAGS)' -o $@ $<

.PHONY: examples
examples: $(EXAMPLES)

# --------------------------------------------------------------------------
# Benchmarks: bench/<name>.c|.cpp -> build/bench/<name>
# --------------------------------------------------------------------------
BENCH_OPT ?= -O3
BENCH_SRCS := $(filter-out bench/clcalls_shim.c,$(wildcard bench/*.c bench/*.cpp))
BENCHES := $(addprefix $(BUILD)/bench/,$(basename $(notdir $(BENCH_SRCS))))
# bench_blas times CLBlast on libstdcl memory: built when configure found it.
ifneq ($(HAVE_CLBLAST),1)
BENCHES := $(filter-out $(BUILD)/bench/bench_blas,$(BENCHES))
endif
BENCH_CU := $(patsubst bench/%.cu,$(BUILD)/bench/%,$(wildcard bench/*.cu))
NVCCFLAGS ?= -O3

$(BUILD)/bench/%.o: DIR_CPPFLAGS = $(PNG_DEFS) -Iexamples/nbody
$(BUILD)/bench/%.o: DIR_CFLAGS = $(BENCH_OPT) $(OPENMP_CFLAGS)
# The NBody baselines share the example's host code (options, physics, check).
NBODY_COMMON = examples/nbody/nbody_common.c
$(BUILD)/bench/nbody_raw_opencl $(BUILD)/bench/nbody_native: $(BUILD)/examples/nbody/nbody_common.o

$(BENCHES): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB_SO)
	$(LINK_PROG) $(OPENMP_CFLAGS) $(PNG_LINK)
# bench_startup's children link as small programs do: startup_empty with
# -lstdcl, startup_raw with OpenCL alone, neither with OpenMP or libpng, so
# that each loads only what it needs.
# subbuffer_order, flush_probe, event_costs and reduce_costs test the driver alone: raw OpenCL, no libstdcl either.
RAW_OPENCL_BENCHES = $(BUILD)/bench/startup_raw $(BUILD)/bench/subbuffer_order $(BUILD)/bench/subbuffer_threads \
    $(BUILD)/bench/flush_probe $(BUILD)/bench/event_costs $(BUILD)/bench/reduce_costs
$(BUILD)/bench/startup_empty $(RAW_OPENCL_BENCHES): private OPENMP_CFLAGS =
$(BUILD)/bench/startup_empty $(RAW_OPENCL_BENCHES): private PNG_LINK =
$(RAW_OPENCL_BENCHES): private PROG_LIBS = $(OPENCL_LIBS) $(LIBS)
$(BUILD)/bench/bench_blas.o: DIR_CPPFLAGS += $(CLBLAST_CFLAGS)
$(BUILD)/bench/bench_blas: private PROG_LIBS += $(CLBLAST_LIBS)

# Where a program's host time goes among its OpenCL calls: a preloaded shim
# (bench/clcalls_shim.c says how to use it).
CLCALLS_SHIM = $(BUILD)/bench/clcalls_shim.so
$(CLCALLS_SHIM): bench/clcalls_shim.c
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CPPFLAGS) -O2 -fPIC -shared -pthread $(WARN) -o $@ $< -ldl

.PHONY: bench bench-cuda
bench: $(BENCHES) $(CLCALLS_SHIM)

ifeq ($(HAVE_NVCC),1)
bench-cuda: $(BENCH_CU)
else
bench-cuda:
	@echo "bench-cuda: configure found no nvcc (put it in PATH, then rm config.mk)" >&2; exit 1
endif

# The CUDA baselines do not use libstdcl; they may share the examples' C.
NVCC_OMP = $(if $(OPENMP_CFLAGS),-Xcompiler $(OPENMP_CFLAGS) -lgomp)
$(BENCH_CU): $(BUILD)/bench/%: bench/%.cu $(NBODY_COMMON)
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -Iinclude -Iexamples/nbody $(PNG_DEFS) $(NVCC_OMP) -o $@ $< \
	    $(NBODY_COMMON) $(PNG_LINK) $(CU_LIBS) -lm
# cuBLAS's SGEMM, the baseline of bench_blas.
$(BUILD)/bench/cublas_sgemm: private CU_LIBS = -lcublas

# --------------------------------------------------------------------------
# Fortran (configure found a compiler: HAVE_FC=1): fortran/ -> the module
# stdcl (build/fortran/mod/stdcl.mod) in libstdcl_fortran.so.X.Y.Z (soname
# libstdcl_fortran.so.MAJOR) and libstdcl_fortran.a; the Fortran runtime is
# linked into these only, never into libstdcl.  The constants and the
# per-kind procedures are generated into build/fortran/ first
# (fortran/gen_constants.c from stdcl.h, fortran/gen_kinds.sh from the
# templates fortran/*.fi).  Then the Fortran programs:
#   tests/fortran/*.f90          build/tests/fortran/<name> (test_fortran runs them;
#                                fortran_embed links fortran_embed.cl embedded by clcc)
#   tests/compat/fortran/*.f90   build/tests/compat/fortran/<name> (STDCL 1.6 forms)
#   examples/fortran/*.f90       build/examples/fortran/<name>
# each linked with -lstdcl_fortran -lstdcl, next to the kernel files of its
# folder (examples/fortran also gets examples/nbody's kernel file).
# --------------------------------------------------------------------------
FORT_DIR = $(BUILD)/fortran
FORT_MODDIR = $(FORT_DIR)/mod
FORT_MOD = $(FORT_MODDIR)/stdcl.mod
# The module files a program's compile reads (stdcl_c and stdcl_contexts are
# the module's parts).
FORT_MODS = $(FORT_MODDIR)/stdcl.mod $(FORT_MODDIR)/stdcl_c.mod $(FORT_MODDIR)/stdcl_contexts.mod
FORT_GEN = $(FORT_DIR)/stdcl_constants.inc $(FORT_DIR)/stdcl_kinds_spec.inc \
           $(FORT_DIR)/stdcl_kinds_body.inc $(FORT_DIR)/stdcl_ranks_spec.inc \
           $(FORT_DIR)/stdcl_ranks_body.inc $(FORT_DIR)/stdcl_reduce_spec.inc \
           $(FORT_DIR)/stdcl_reduce_body.inc
FORT_OBJS = $(FORT_DIR)/stdcl.o $(FORT_DIR)/stdcl_fortran_shim.o
FLIB_SONAME = libstdcl_fortran.so.$(STDCL_MAJOR)
FLIB_REAL = $(BUILD)/lib/libstdcl_fortran.so.$(PACKAGE_VERSION)
FLIB_SONAME_LINK = $(BUILD)/lib/$(FLIB_SONAME)
FLIB_SO = $(BUILD)/lib/libstdcl_fortran.so
FLIB_A = $(BUILD)/lib/libstdcl_fortran.a
FLIB_MAP = $(BUILD)/lib/libstdcl_fortran.map
FLIB_PC = $(BUILD)/pkgconfig/stdcl-fortran.pc
OBJCOPY ?= objcopy
FORT_WARN = -Wall $(if $(filter 1,$(WERROR)),-Werror)
$(FORT_DIR)/gen_constants: fortran/gen_constants.c include/stdcl.h | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(CSTD) $(WARN) $(CFLAGS) -o $@ $<
$(FORT_DIR)/stdcl_constants.inc: $(FORT_DIR)/gen_constants
	$< > $@
$(FORT_DIR)/stdcl_kinds_%.inc: fortran/kinds_%.fi fortran/gen_kinds.sh
	@mkdir -p $(@D)
	sh fortran/gen_kinds.sh $< > $@
$(FORT_DIR)/stdcl_ranks_%.inc: fortran/ranks_%.fi fortran/gen_kinds.sh
	@mkdir -p $(@D)
	sh fortran/gen_kinds.sh -r $< > $@
$(FORT_DIR)/stdcl_reduce_%.inc: fortran/reduce_%.fi fortran/gen_kinds.sh
	@mkdir -p $(@D)
	sh fortran/gen_kinds.sh -k reduce $< > $@

# stdcl_contexts declares libstdcl's default contexts (bind(C) variables):
# only its module file is made, no object, so that no library holds a copy
# of the variables (fortran/stdcl_contexts.f90 says why).
$(FORT_MODDIR)/stdcl_contexts.mod: fortran/stdcl_contexts.f90
	@mkdir -p $(@D)
	$(FC) $(FCFLAGS) $(FORT_WARN) -fsyntax-only -J$(FORT_MODDIR) $<

# One rule makes the object and the module files of stdcl.F90 (a module
# file deleted since is made again with the object).
$(FORT_MODDIR)/stdcl.mod $(FORT_MODDIR)/stdcl_c.mod: $(FORT_DIR)/stdcl.o
	@test -f $@ || { rm -f $<; $(MAKE) --no-print-directory $<; }
$(FORT_DIR)/stdcl.o: fortran/stdcl.F90 $(FORT_GEN) $(FORT_MODDIR)/stdcl_contexts.mod
	@mkdir -p $(@D) $(FORT_MODDIR)
	$(FC) $(FCFLAGS) $(FORT_WARN) $(SAN_FLAGS) -fPIC -I$(FORT_DIR) -I$(FORT_MODDIR) -J$(FORT_MODDIR) -c $< -o $@

$(FORT_DIR)/stdcl_fortran_shim.o: fortran/stdcl_fortran_shim.c include/stdcl.h | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CC) $(DEPFLAGS) $(ALL_CPPFLAGS) $(CSTD) -fPIC -fvisibility=hidden $(WARN) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

# Exports the modules' procedures and type data only (gfortran names them
# __stdcl_MOD_* and __stdcl_c_MOD_*): not the C helpers of the shim.
$(FLIB_MAP): Makefile
	@mkdir -p $(@D)
	printf 'STDCL_FORTRAN_1 {\n  global:\n    __stdcl_MOD_*;\n    __stdcl_c_MOD_*;\n  local: *;\n};\n' > $@

$(FLIB_REAL): $(FORT_OBJS) $(FLIB_MAP) $(LIB_SO)
	$(FC) -shared $(FCFLAGS) $(LDFLAGS) $(SAN_FLAGS) -Wl,-soname,$(FLIB_SONAME) \
	    -Wl,--version-script=$(FLIB_MAP) $(LIB_NOUNDEF) \
	    -o $@ $(FORT_OBJS) -L$(BUILD)/lib -lstdcl $(LIBS)

$(FLIB_SONAME_LINK): $(FLIB_REAL)
	ln -sf $(notdir $<) $@

$(FLIB_SO): $(FLIB_SONAME_LINK)
	ln -sf $(notdir $<) $@

$(FLIB_A): $(FORT_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# stdcl-fortran.pc for the uninstalled tree (as stdcl.pc above).
$(FLIB_PC): stdcl-fortran.pc
	@mkdir -p $(@D)
	sed -e 's|^prefix=.*|prefix=$(CURDIR)|' \
	    -e 's|^libdir=.*|libdir=$(CURDIR)/$(BUILD)/lib|' \
	    -e 's|^fmoddir=.*|fmoddir=$(CURDIR)/$(FORT_MODDIR)|' \
	    -e 's|^includedir=.*|includedir=$(CURDIR)/include|' $< > $@

FORT_TEST_PROGS := $(patsubst %.f90,$(BUILD)/%,$(wildcard tests/fortran/*.f90 tests/compat/fortran/*.f90))
FORT_EXAMPLES := $(patsubst %.f90,$(BUILD)/%,$(wildcard examples/fortran/*.f90))
FORT_DATA := $(addprefix $(BUILD)/,$(filter-out tests/fortran/fortran_embed.cl,\
             $(wildcard tests/fortran/*.cl tests/compat/fortran/*.cl examples/fortran/*.cl))) \
             $(BUILD)/examples/fortran/nbody_kern.cl

# Programs: one source each; they find the libraries through their rpath.
FORT_PROG_LINK = -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/$(rpath_up)lib' -lstdcl_fortran -lstdcl
$(FORT_TEST_PROGS) $(FORT_EXAMPLES): $(BUILD)/%: %.f90 $(FORT_MODS) $(FLIB_SO)
	@mkdir -p $(@D)
	$(FC) $(FCFLAGS) $(FORT_WARN) $(SAN_FLAGS) -I$(FORT_MODDIR) -o $@ $< $(filter %.o,$^) \
	    $(LDFLAGS) $(FORT_PROG_LINK)

# The test programs share a module (tests/fortran/support: check and finish).
FORT_CHECKS_OBJ = $(BUILD)/tests/fortran/support/fortran_checks.o
$(FORT_CHECKS_OBJ): tests/fortran/support/fortran_checks.f90
	@mkdir -p $(@D)
	$(FC) $(FCFLAGS) $(FORT_WARN) $(SAN_FLAGS) -J$(@D) -c $< -o $@
$(filter $(BUILD)/tests/fortran/%,$(FORT_TEST_PROGS)): $(FORT_CHECKS_OBJ)
$(filter $(BUILD)/tests/fortran/%,$(FORT_TEST_PROGS)): private FCFLAGS += -I$(BUILD)/tests/fortran/support

# fortran_threads runs OpenMP threads (when configure found OpenMP).
$(BUILD)/tests/fortran/fortran_threads: private FCFLAGS += $(OPENMP_CFLAGS)

# fortran_foreign makes OpenCL calls of its own (its interface blocks), as a
# program handing its arrays to an OpenCL library does.
$(BUILD)/tests/fortran/fortran_foreign: private FORT_PROG_LINK += $(OPENCL_LIBS)

# fortran_embed links its kernel, embedded by clcc, as an object.
$(BUILD)/tests/fortran/fortran_embed: $(BUILD)/tests/fortran/fortran_embed_cl.o
$(BUILD)/tests/fortran/%_cl.o: tests/fortran/%.cl $(BUILD)/bin/clcc
	@mkdir -p $(@D)
	$(BUILD)/bin/clcc -c -MD --cc '$(CC) $(SAN_FLAGS)' -o $@ $<
$(FORT_EXAMPLES): private FCFLAGS += -O3

$(BUILD)/examples/fortran/nbody_kern.cl: examples/nbody/nbody_kern.cl
	@mkdir -p $(@D)
	cp $< $@

.PHONY: fortran fortran-tests fortran-examples
ifeq ($(HAVE_FC),1)
fortran: $(FLIB_REAL) $(FLIB_SONAME_LINK) $(FLIB_SO) $(FLIB_A) $(FORT_MODS) $(FLIB_PC)
fortran-tests: fortran $(FORT_TEST_PROGS) $(FORT_DATA)
fortran-examples: fortran $(FORT_EXAMPLES) $(FORT_DATA)
else
fortran fortran-tests fortran-examples:
	@echo "$@: configure found no Fortran compiler (install gfortran or set FC, then rerun ./configure)"
endif

# --------------------------------------------------------------------------
# Main targets
# --------------------------------------------------------------------------
.PHONY: all check run stress asan tsan ubsan asan-ubsan install uninstall clean distclean

all: lib tools tests examples bench $(if $(filter 1,$(HAVE_FC)),fortran fortran-tests fortran-examples)

T ?=
F ?=
# The benchmarks are not needed by the tests: make all (and .ci/run) builds them.
CHECK_BUILD = lib tools tests examples fuzz-replay $(if $(filter 1,$(HAVE_FC)),fortran fortran-tests fortran-examples)
check: $(CHECK_BUILD)
ifneq ($(HAVE_CMOCKA),1)
ifeq ($(STDCL_DEPS_TRIED),)
	@# configured before without CMocka: install what is missing, configure again
	@$(INSTALL_DEPS)
	./config.status --recheck && ./config.status
	$(MAKE) check STDCL_DEPS_TRIED=1
else
	@echo "check: CMocka not found by configure (tools/install_deps.sh installs it)" >&2; exit 1
endif
else
	BUILD_DIR=$(BUILD) STDCL_TEST_CC='$(CC)' STDCL_TEST_CFLAGS='$(SAN_FLAGS)' \
	    bash tools/run_tests.sh $(T) $(if $(F),'$(F)')
endif

run: all
	bash tools/test_env.sh --keep-user-env sh -c '$(RUN_CMD)'

# The sync check against its reference model over generated programs
# (tests/sync_model.py): COUNT programs from seed SYNC_SEED, in copy mode and
# in zero-copy mode, on up to SYNC_DEVICES of PoCL's CPU devices (default 2).
# One disagreement is shrunk to a small program, also printed as C, with
# `python3 tests/sync_model.py --shrink SEED`.
COUNT ?= 200
SYNC_SEED ?= 1
SYNC_DEVICES ?= 2
.PHONY: check-sync-model
check-sync-model: tests
	python3 tests/sync_model.py --runner $(BUILD)/tests/helper_syncrun --count $(COUNT) --seed $(SYNC_SEED) --devices $(SYNC_DEVICES) --zero-copy 0
	python3 tests/sync_model.py --runner $(BUILD)/tests/helper_syncrun --count $(COUNT) --seed $(SYNC_SEED) --devices $(SYNC_DEVICES) --zero-copy 1

# The stress test for as long as asked (each of its two tests runs SECONDS).
SECONDS ?= 60
THREADS ?=
SEED ?=
stress: tests
	BUILD_DIR=$(BUILD) TEST_TIMEOUT=$$(( 2 * $(SECONDS) + 900 )) STDCL_STRESS_SECONDS=$(SECONDS) \
	    STDCL_STRESS_THREADS=$(THREADS) STDCL_STRESS_SEED=$(SEED) \
	    bash tools/run_tests.sh test_stress

# The whole fault-injection sweep (tools/check_faults.sh): both memory modes,
# OpenCL calls and allocations.  FAULTS_FLAGS adds options (--jobs 4,
# --every, --valgrind, --keep DIR ...).
FAULTS_FLAGS ?=
# On a machine with an OpenCL GPU: the ordering scenarios, the stress mix, the
# examples' --check and the STDCL 1.6 programs on the GPU, compiled in the
# process and from the program cache (tools/check_gpu.sh).
.PHONY: check-gpu
check-gpu: all
	BUILD_DIR=$(BUILD) bash tools/check_gpu.sh

.PHONY: check-faults
check-faults: lib $(FAULT_PROGS)
	BUILD_DIR=$(BUILD) bash tools/check_faults.sh $(FAULTS_FLAGS)

# The fuzz targets (make fuzz, make fuzz-build): tests/fuzz/fuzz.mk.
include tests/fuzz/fuzz.mk

# Sanitizers: the library, tools and tests rebuilt into build-<name>/.
SAN_asan := -fsanitize=address -fno-omit-frame-pointer
SAN_tsan := -fsanitize=thread
SAN_ubsan := -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_asan-ubsan := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# (The sanitizers' run-time options are in tools/test_env.sh.)

# Under TSan the examples are built without OpenMP: libgomp is not
# instrumented, so TSan does not see its barriers and reports every
# parallel loop's results as racing with their reader.
SAN_MAKEFLAGS_tsan := OPENMP_CFLAGS=

# PoCL compiles kernels 2-4 times slower in a sanitized process (LLVM's
# allocations go through the sanitizer): the sanitizer runs share one PoCL
# kernel cache, kept between runs (tools/test_env.sh, TEST_POCL_CACHE_DIR).
SAN_POCL_CACHE = $(CURDIR)/build-san-pocl-cache
# A sanitized test program may take 3-6 times as long (test_cache, which
# starts some 30 processes, takes 2-3 minutes under TSan on 2 cores): the
# time limit per program is 900 s instead of run_tests.sh's 300.

# With T=... naming none of the programs that run examples, the examples are not built.
SAN_EXAMPLES = $(if $(strip $(T)),$(if $(filter test_clete test_compat test_examples test_gpu_oclgrind test_mpi test_nbody,$(subst $(comma), ,$(T))),examples),examples)
comma := ,
asan tsan ubsan asan-ubsan:
	$(MAKE) BUILD=build-$@ SAN_FLAGS='$(SAN_$@)' $(SAN_MAKEFLAGS_$@) tests $(SAN_EXAMPLES)
	BUILD_DIR=build-$@ STDCL_TEST_CC='$(CC)' STDCL_TEST_CFLAGS='$(SAN_$@)' \
	    TEST_POCL_CACHE_DIR='$(SAN_POCL_CACHE)' TEST_TIMEOUT=$${TEST_TIMEOUT:-900} TEST_SKIP='$(TEST_SKIP)' \
	    bash tools/run_tests.sh $(T) $(if $(F),'$(F)')

# Manual pages: docs/man/manN/*.N -> $(mandir)/manN/ (the .so links too:
# man-db and mandoc follow them).  `make install mandir=...` moves them.
mandir = $(PREFIX)/share/man
MAN1 := $(wildcard docs/man/man1/*.1)
MAN3 := $(wildcard docs/man/man3/*.3)
MAN7 := $(wildcard docs/man/man7/*.7)

# Installed stdcl.pc: configure's, with the install prefix baked in.
pc_rel = $(patsubst $(PREFIX)%,$${prefix}%,$(1))
# With Fortran (HAVE_FC=1) also libstdcl_fortran (.so with its soname links,
# .a), the module files in $(libdir)/fortran/$(FC_MODDIR_NAME) (Debian's
# folder for gfortran's module format) with the module's source beside
# them, and stdcl-fortran.pc; the CMake package then has stdcl::fortran.
FORT_INSTALL_MODDIR = $(libdir)/fortran/$(FC_MODDIR_NAME)
FORT_INSTALL_SRC = fortran/stdcl.F90 fortran/stdcl_contexts.f90 $(FORT_GEN)
install: lib tools $(if $(filter 1,$(HAVE_FC)),fortran)
	install -d $(DESTDIR)$(includedir) $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(bindir)
	install -m 644 include/stdcl.h include/stdcl_cache.h include/stdcl_version.h $(DESTDIR)$(includedir)/
	install -m 755 $(LIB_REAL) $(DESTDIR)$(libdir)/
	ln -sf libstdcl.so.$(PACKAGE_VERSION) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libstdcl.so
	install -m 644 $(LIB_A) $(DESTDIR)$(libdir)/
	install -m 644 $(LIB_CLELF) $(DESTDIR)$(libdir)/
	install -m 644 include/clvector.h include/clmulti_array.h include/clmalloc_allocator.h include/clete.h include/stdcl.hpp $(DESTDIR)$(includedir)/
	sed -e 's|^prefix=.*|prefix=$(PREFIX)|' \
	    -e 's|^exec_prefix=.*|exec_prefix=$(call pc_rel,$(exec_prefix))|' \
	    -e 's|^libdir=.*|libdir=$(call pc_rel,$(libdir))|' \
	    -e 's|^includedir=.*|includedir=$(call pc_rel,$(includedir))|' \
	    stdcl.pc > $(BUILD)/stdcl-install.pc
	install -m 644 $(BUILD)/stdcl-install.pc $(DESTDIR)$(libdir)/pkgconfig/stdcl.pc
	install -d $(DESTDIR)$(libdir)/cmake/stdcl
	for f in stdclConfig stdclConfigVersion; do \
	    sed -e 's|@VERSION@|$(PACKAGE_VERSION)|g' -e 's|@MAJOR@|$(STDCL_MAJOR)|g' \
	        -e 's|@INCLUDE_FROM_LIB@|$(INCLUDE_FROM_LIB)|g' \
	        -e 's|@FC_MODDIR_NAME@|$(FC_MODDIR_NAME)|g' tools/cmake/$$f.cmake.in > $(BUILD)/$$f.cmake && \
	    install -m 644 $(BUILD)/$$f.cmake $(DESTDIR)$(libdir)/cmake/stdcl/ || exit 1; \
	done
ifeq ($(HAVE_FC),1)
	install -m 755 $(FLIB_REAL) $(DESTDIR)$(libdir)/
	ln -sf libstdcl_fortran.so.$(PACKAGE_VERSION) $(DESTDIR)$(libdir)/$(FLIB_SONAME)
	ln -sf $(FLIB_SONAME) $(DESTDIR)$(libdir)/libstdcl_fortran.so
	install -m 644 $(FLIB_A) $(DESTDIR)$(libdir)/
	install -d $(DESTDIR)$(FORT_INSTALL_MODDIR)
	install -m 644 $(FORT_MODS) $(FORT_INSTALL_SRC) $(DESTDIR)$(FORT_INSTALL_MODDIR)/
	sed -e 's|^prefix=.*|prefix=$(PREFIX)|' \
	    -e 's|^exec_prefix=.*|exec_prefix=$(call pc_rel,$(exec_prefix))|' \
	    -e 's|^libdir=.*|libdir=$(call pc_rel,$(libdir))|' \
	    -e 's|^includedir=.*|includedir=$(call pc_rel,$(includedir))|' \
	    stdcl-fortran.pc > $(BUILD)/stdcl-fortran-install.pc
	install -m 644 $(BUILD)/stdcl-fortran-install.pc $(DESTDIR)$(libdir)/pkgconfig/stdcl-fortran.pc
endif
ifneq ($(TOOLS),)
	install -m 755 $(TOOLS) $(DESTDIR)$(bindir)/
endif
	install -d $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man3 $(DESTDIR)$(mandir)/man7
	@# the footer names the version: .TH ... "libstdcl" -> "libstdcl X.Y.Z"
	for f in $(MAN1) $(MAN3) $(MAN7); do \
	    s=$${f##*.}; \
	    sed '/^\.TH /s/"libstdcl"/"libstdcl $(PACKAGE_VERSION)"/' $$f > $(DESTDIR)$(mandir)/man$$s/$${f##*/} && \
	    chmod 644 $(DESTDIR)$(mandir)/man$$s/$${f##*/} || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(includedir)/stdcl.h $(DESTDIR)$(includedir)/stdcl_cache.h $(DESTDIR)$(includedir)/stdcl_version.h \
	      $(DESTDIR)$(includedir)/clvector.h $(DESTDIR)$(includedir)/clmulti_array.h \
	      $(DESTDIR)$(includedir)/stdcl.hpp $(DESTDIR)$(includedir)/clmalloc_allocator.h $(DESTDIR)$(includedir)/clete.h \
	      $(DESTDIR)$(libdir)/libclelf.so
	rm -f $(DESTDIR)$(libdir)/libstdcl.so.$(PACKAGE_VERSION) \
	      $(DESTDIR)$(libdir)/$(SONAME) $(DESTDIR)$(libdir)/libstdcl.so \
	      $(DESTDIR)$(libdir)/libstdcl.a $(DESTDIR)$(libdir)/pkgconfig/stdcl.pc \
	      $(DESTDIR)$(libdir)/cmake/stdcl/stdclConfig.cmake $(DESTDIR)$(libdir)/cmake/stdcl/stdclConfigVersion.cmake
	-rmdir $(DESTDIR)$(libdir)/cmake/stdcl $(DESTDIR)$(libdir)/cmake 2>/dev/null
	rm -f $(DESTDIR)$(libdir)/libstdcl_fortran.so.$(PACKAGE_VERSION) $(DESTDIR)$(libdir)/$(FLIB_SONAME) \
	      $(DESTDIR)$(libdir)/libstdcl_fortran.so $(DESTDIR)$(libdir)/libstdcl_fortran.a \
	      $(DESTDIR)$(libdir)/pkgconfig/stdcl-fortran.pc \
	      $(addprefix $(DESTDIR)$(FORT_INSTALL_MODDIR)/,$(notdir $(FORT_MODS) $(FORT_INSTALL_SRC)))
	-rmdir $(DESTDIR)$(FORT_INSTALL_MODDIR) $(DESTDIR)$(libdir)/fortran 2>/dev/null
ifneq ($(TOOLS),)
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(TOOLS)))
endif
	rm -f $(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(MAN1))) \
	      $(addprefix $(DESTDIR)$(mandir)/man3/,$(notdir $(MAN3))) \
	      $(addprefix $(DESTDIR)$(mandir)/man7/,$(notdir $(MAN7)))

# --------------------------------------------------------------------------
# Releases
# --------------------------------------------------------------------------
# make check-abi: the library against the stored ABI baseline (tools/check_abi.sh,
# docs/abi.md); make abi-baseline writes the baseline again (only with a soname
# change or an addition).
ABI_BASELINE = tests/abi/libstdcl-$(STDCL_MAJOR).abi
.PHONY: check-abi abi-baseline
check-abi: $(LIB_REAL)
	sh tools/check_abi.sh $(LIB_REAL) $(ABI_BASELINE)
abi-baseline: $(LIB_REAL)
	sh tools/check_abi.sh --update $(LIB_REAL) $(ABI_BASELINE)

# make dist: libstdcl-VERSION.tar.gz, every file git tracks plus the generated
# configure (so that a user of the tarball needs no autoconf), owned by root,
# in name order, dated by the last commit.  make distcheck: the tarball alone,
# unpacked in build/distcheck, configures, builds, passes `make check`,
# installs into a staging folder and uninstalls leaving nothing
# (STDCL_SKIP_DEPS=1: it installs no packages; the tests need what `make
# check` needs).
DIST_NAME = libstdcl-$(PACKAGE_VERSION)
DIST_TAR = $(DIST_NAME).tar.gz
.PHONY: dist distcheck
dist: configure
	@git rev-parse --is-inside-work-tree > /dev/null 2>&1 || \
	    { echo "dist: needs a git checkout (the file list is git ls-files)" >&2; exit 1; }
	rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist/$(DIST_NAME)
	git ls-files -z | xargs -0 tar -cf - | tar -xf - -C $(BUILD)/dist/$(DIST_NAME)
	cp configure $(BUILD)/dist/$(DIST_NAME)/
	tar --sort=name --owner=0 --group=0 --numeric-owner \
	    --mtime="@$$(git log -1 --format=%ct)" -C $(BUILD)/dist -czf $(DIST_TAR) $(DIST_NAME)
	rm -rf $(BUILD)/dist
	@echo "dist: $(DIST_TAR) ($$(tar -tzf $(DIST_TAR) | grep -cv '/$$') files)"

distcheck: dist
	rm -rf $(BUILD)/distcheck && mkdir -p $(BUILD)/distcheck/stage
	tar -xzf $(DIST_TAR) -C $(BUILD)/distcheck
	cd $(BUILD)/distcheck/$(DIST_NAME) && export STDCL_SKIP_DEPS=1 && \
	    ./configure --prefix=/usr/local && \
	    $(MAKE) -j$$(nproc) all && \
	    $(MAKE) check && \
	    $(MAKE) install DESTDIR=$(abspath $(BUILD))/distcheck/stage && \
	    $(MAKE) uninstall DESTDIR=$(abspath $(BUILD))/distcheck/stage
	@left=$$(find $(BUILD)/distcheck/stage -type f -o -type l); \
	    if [ -n "$$left" ]; then echo "distcheck: make uninstall left: $$left" >&2; exit 1; fi
	rm -rf $(BUILD)/distcheck
	@echo "distcheck: $(DIST_TAR) builds, passes make check, installs and uninstalls"

# make deb: the Debian packages of debian/ (libstdcl1, libstdcl-dev,
# stdcl-tools), built from the release tarball unpacked in build/deb with
# dpkg-buildpackage -us -uc -b (it checks Build-Depends and installs nothing;
# the unit tests run when PoCL is there), then checked by lintian; the .deb
# files stay in build/deb.
.PHONY: deb
deb: dist
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb
	tar -xzf $(DIST_TAR) -C $(BUILD)/deb
	cd $(BUILD)/deb/$(DIST_NAME) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning $(BUILD)/deb/*.changes
	@ls $(BUILD)/deb/*.deb

clean:
	rm -rf build build-asan build-tsan build-ubsan build-asan-ubsan build-san-pocl-cache $(BUILD)

distclean: clean
	rm -rf config.mk config.log config.status configure configure~ autom4te.cache \
	       stdcl.pc stdcl-fortran.pc include/stdcl_version.h

# Header dependencies recorded by -MMD.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
