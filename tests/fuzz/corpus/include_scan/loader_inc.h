/* SPDX-License-Identifier: MIT */
/* loader_inc.h: included by loader.cl with #include "loader_inc.h"; found
 * only through the -I <kernel file's directory> that clopen adds. */
#define LOADER_INC_VALUE 42
