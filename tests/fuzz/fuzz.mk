# SPDX-License-Identifier: MIT
# fuzz.mk: the libFuzzer targets of tests/fuzz (tests/fuzz/README), included
# by the top Makefile.  Needs clang++ with libFuzzer (FUZZ_CXX); nothing else
# in the build depends on these targets.
#
#   make fuzz-build          build/fuzz/fuzz_<name> for each tests/fuzz/fuzz_<name>.cpp
#   make fuzz [SECONDS=N]    tests/fuzz/run_fuzz.sh: builds them, runs each for
#                            N seconds (default 60); fails if one finds a crash
#   make fuzz-replay         build/fuzz-replay/replay_<name>: the same targets
#                            with tests/fuzz/replay_main.cpp for a main, built
#                            with the project's compiler against
#                            build/lib/libstdcl.a (make check runs them:
#                            run_fuzz.sh --replay)
#
# The library's sources (every libstdcl/**/*.cpp, found by find so that files
# may move into sub-folders) are compiled again with clang, coverage
# instrumentation and ASan + UBSan into build/fuzz/obj/ and archived in
# build/fuzz/libstdcl_fuzz.a: the gcc-built objects of build/libstdcl carry no
# instrumentation.  Each target links the archive (only the members it uses),
# tests/fuzz/fake_opencl.cpp (a stand-in for the few OpenCL calls the targets
# reach; it reports no platform, so the library's load-time default contexts
# stay empty) and, for every other OpenCL name a member refers to, the ICD
# loader.

FUZZ_CXX ?= clang++
FUZZ_DIR = $(BUILD)/fuzz
# Flags of every fuzz object: the targets and the library alike.
FUZZ_FLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_SRCS := $(shell find libstdcl -name '*.cpp' 2>/dev/null | LC_ALL=C sort)
FUZZ_LIB_OBJS = $(FUZZ_LIB_SRCS:%.cpp=$(FUZZ_DIR)/obj/%.o)
FUZZ_LIB = $(FUZZ_DIR)/libstdcl_fuzz.a
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.cpp,%,$(wildcard tests/fuzz/fuzz_*.cpp))
FUZZ_PROGS = $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_SUPPORT = $(FUZZ_DIR)/obj/tests/fuzz/fake_opencl.o

# Library and target objects alike: coverage-instrumented, no libFuzzer main.
$(FUZZ_DIR)/obj/%.o: %.cpp | include/stdcl_version.h
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) -Ilibstdcl $(CXXSTD) -pthread $(FUZZ_FLAGS) \
	    -fsanitize=fuzzer-no-link -c $< -o $@

# The list of sources, rewritten only when it changes, so that the archive is
# made again when a source is removed or moved (no object is newer then).
FUZZ_LIB_LIST = $(FUZZ_DIR)/libstdcl_fuzz.list
$(FUZZ_LIB_LIST): fuzz-list-check
	@mkdir -p $(@D)
	@echo '$(FUZZ_LIB_SRCS)' | cmp -s - $@ || echo '$(FUZZ_LIB_SRCS)' > $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS) $(FUZZ_LIB_LIST)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(FUZZ_LIB_OBJS)

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_SUPPORT) $(FUZZ_LIB)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer -pthread -o $@ $(filter %.o,$^) $(FUZZ_LIB) \
	    $(OPENCL_LIBS) $(NETTLE_LIBS) -lm -lpthread -ldl $(LIBS)

# Writes the cache-entry seeds (tests/fuzz/README says when to run it again).
$(FUZZ_DIR)/make_cache_seeds: $(FUZZ_DIR)/obj/tests/fuzz/make_cache_seeds.o $(FUZZ_SUPPORT) $(FUZZ_LIB)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -pthread -o $@ $(filter %.o,$^) $(FUZZ_LIB) \
	    $(OPENCL_LIBS) $(NETTLE_LIBS) -lm -lpthread -ldl $(LIBS)

.PHONY: fuzz fuzz-build fuzz-list-check
fuzz-build: $(FUZZ_PROGS)

# SECONDS is the top Makefile's (make stress uses it too; default 60).
fuzz:
	BUILD_DIR=$(BUILD) FUZZ_CXX='$(FUZZ_CXX)' MAKE='$(MAKE)' bash tests/fuzz/run_fuzz.sh --seconds $(SECONDS)

# The replay programs (tests/fuzz/replay_main.cpp): no clang, no libFuzzer, no
# second build of the library.  make check builds and runs them; make fuzz is
# the coverage-guided search.
REPLAY_DIR = $(BUILD)/fuzz-replay
REPLAY_PROGS = $(FUZZ_NAMES:%=$(REPLAY_DIR)/replay_%)
REPLAY_SUPPORT = $(REPLAY_DIR)/obj/tests/fuzz/fake_opencl.o $(REPLAY_DIR)/obj/tests/fuzz/replay_main.o

$(REPLAY_DIR)/obj/%.o: %.cpp | include/stdcl_version.h
	@mkdir -p $(@D)
	$(CXX) $(DEPFLAGS) $(ALL_CPPFLAGS) -Ilibstdcl $(CXXSTD) -pthread $(WARN) $(CXXFLAGS) -c $< -o $@

$(REPLAY_DIR)/replay_%: $(REPLAY_DIR)/obj/tests/fuzz/fuzz_%.o $(REPLAY_SUPPORT) $(LIB_A)
	$(CXX) $(CXXFLAGS) -pthread -o $@ $(filter %.o,$^) $(LIB_A) \
	    $(OPENCL_LIBS) $(NETTLE_LIBS) -lm -lpthread -ldl $(LIBS)

.PHONY: fuzz-replay
fuzz-replay: $(REPLAY_PROGS)
