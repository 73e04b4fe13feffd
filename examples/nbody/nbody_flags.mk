# SPDX-License-Identifier: MIT
# nbody_flags.mk: how the NBody Makefiles (this folder's and ../nbody_mpi's,
# which include it) find libstdcl and libpng with pkg-config, and the flags
# they compile and link with.
#
#   make PKG_CONFIG_PATH=../../build/pkgconfig
#                         builds against the libstdcl source tree's build/
#
# libpng is optional (--png); OpenMP only speeds up --check's host reference.

CFLAGS ?= -O2 -g
OPENMP ?= -fopenmp
PKG_CONFIG ?= pkg-config

# PKG_CONFIG_PATH works from the environment or the make command line.
PKGCONF = $(if $(PKG_CONFIG_PATH),PKG_CONFIG_PATH=$(PKG_CONFIG_PATH) )$(PKG_CONFIG)
ifneq ($(MAKECMDGOALS),clean)
STDCL_CFLAGS := $(shell $(PKGCONF) --cflags stdcl)
STDCL_LIBS := $(shell $(PKGCONF) --libs stdcl)
STDCL_LIBDIR := $(shell $(PKGCONF) --variable=libdir stdcl)
PNG_LIBS := $(shell $(PKGCONF) --libs libpng 2>/dev/null)
ifneq ($(PNG_LIBS),)
PNG_CFLAGS := -DHAVE_PNG=1 $(shell $(PKGCONF) --cflags libpng)
endif
endif

# INCLUDES: the including Makefile's -I options, before libstdcl's.
ALL_CFLAGS = -std=gnu99 -Wall -Wextra $(CFLAGS) $(OPENMP) $(INCLUDES) $(STDCL_CFLAGS) $(PNG_CFLAGS)
LIBS = $(STDCL_LIBS) $(PNG_LIBS) -lm
# The library is found at run time where pkg-config says it is.
RPATH = $(if $(STDCL_LIBDIR),-Wl$(comma)-rpath$(comma)$(STDCL_LIBDIR))
comma := ,
