# SPDX-License-Identifier: MIT
# example.mk: the rules of the small examples' Makefiles (mixed_pointers,
# nbody_tile, template_reduce, tiled_conv, blas, fft), which set PROG and
# include it.  PROG is built from PROG.c (which includes ../example_args.h)
# against an installed libstdcl, found with pkg-config: if libstdcl is
# installed under a prefix pkg-config does not search, set
# PKG_CONFIG_PATH=<prefix>/lib/pkgconfig (in the source tree, after the
# top-level make: ../../build/pkgconfig).  PKGS names the other pkg-config
# packages PROG uses (blas: clblast; fft: clFFT).
#
#   make          builds PROG
#   make run      runs ./PROG --check (from the folder: it finds its .cl there)
#   make clean
CC ?= cc
CFLAGS ?= -O2 -Wall -Wextra
ifneq ($(MAKECMDGOALS),clean)
STDCL_CFLAGS := $(shell pkg-config --cflags stdcl $(PKGS))
STDCL_LIBS := $(shell pkg-config --libs stdcl $(PKGS))
endif
# The folder of this file, where example_args.h is.
EXAMPLES_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

$(PROG): $(PROG).c $(EXAMPLES_DIR)example_args.h
	$(CC) $(CFLAGS) $(STDCL_CFLAGS) -o $@ $< $(STDCL_LIBS) -lm

run: $(PROG)
	./$(PROG) --check

clean:
	rm -f $(PROG)

.PHONY: run clean
