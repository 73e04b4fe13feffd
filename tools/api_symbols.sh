#!/bin/sh
# api_symbols.sh: prints, one per line and sorted, the names of the functions
# and variables declared with STDCL_API in a header (default include/stdcl.h).
# Used by the Makefile (to write the linker version script that exports
# exactly these) and by tests/check_exports.sh (to compare with the library).
#
# A declaration runs from a line starting with STDCL_API to the first ';';
# its name is the identifier before the first '(' (a function) or, without
# one, the last identifier (a variable).
header=${1:-include/stdcl.h}
[ -r "$header" ] || { echo "api_symbols.sh: cannot read $header" >&2; exit 2; }
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
' "$header" | LC_ALL=C sort -u
