#!/bin/sh
# SPDX-License-Identifier: MIT
# api_symbols.sh: prints, one per line and sorted, the names of the functions
# and variables declared with STDCL_API in the public headers given (default
# the two of the library: include/stdcl.h and include/stdcl_cache.h).
# Used by the Makefile (to write the linker version script that exports
# exactly these) and by tests/check_exports.sh (to compare with the library).
#
# A declaration runs from a line starting with STDCL_API to the first ';';
# its name is the identifier before the first '(' (a function) or, without
# one, the last identifier (a variable).
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$top/include/stdcl.h" "$top/include/stdcl_cache.h"
for header in "$@"; do
    [ -r "$header" ] || { echo "api_symbols.sh: cannot read $header" >&2; exit 2; }
done
awk '
    /^[ \t]*STDCL_API[ \t]/ { decl = ""; collecting = 1 }
    collecting {
        decl = decl " " $0
        if (index($0, ";") == 0) next
        collecting = 0
        sub(/;.*/, "", decl)          # up to the end of the declaration
        sub(/\(.*/, "", decl)         # a function: up to its parameter list
        sub(/\[.*/, "", decl)         # an array variable: drop the bounds
        sub(/[ \t]+$/, "", decl)
        if (match(decl, /[A-Za-z_][A-Za-z0-9_]*$/))
            print substr(decl, RSTART, RLENGTH)
    }
' "$@" | LC_ALL=C sort -u
