#!/bin/sh
# SPDX-License-Identifier: MIT
# check_abi.sh: the library's ABI against the stored baseline (make check-abi).
#
#   tools/check_abi.sh LIB BASELINE            compare (abidiff)
#   tools/check_abi.sh --update LIB BASELINE   write the baseline (abidw)
#
# The ABI is what the public headers (include/) declare: the exported
# functions and variables with their symbol versions, and the types they use,
# struct layouts and enum values included (docs/abi.md).  The comparison
#   - fails, with abidiff's report, on any change but added functions or
#     variables: a removed or changed symbol, a changed struct or enum;
#   - passes on additions alone, and says that the baseline is to be written
#     again (make abi-baseline) with the minor version that adds them.
# Update the baseline only with such an addition or with a soname change.
# Needs abidw and abidiff (Debian: abigail-tools; tools/install_deps.sh).
update=0
if [ "${1:-}" = --update ]; then
    update=1
    shift
fi
lib=${1:?usage: check_abi.sh [--update] LIB BASELINE}
baseline=${2:?usage: check_abi.sh [--update] LIB BASELINE}
top=$(cd "$(dirname "$0")/.." && pwd)
for tool in abidw abidiff; do
    if ! command -v $tool > /dev/null 2>&1; then
        echo "check_abi: $tool is not installed (Debian: abigail-tools)" >&2
        exit 1
    fi
done
suppr="$top/tests/abi/opaque.suppr"
abidw_flags="--headers-dir $top/include --drop-private-types --suppressions $suppr --no-corpus-path --no-show-locs --no-comp-dir-path"

if [ $update -eq 1 ]; then
    # shellcheck disable=SC2086
    abidw $abidw_flags --out-file "$baseline" "$lib" || exit 1
    echo "check_abi: wrote $baseline from $lib"
    exit 0
fi
if [ ! -f "$baseline" ]; then
    echo "check_abi: no baseline $baseline (make abi-baseline writes it)" >&2
    exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
abidw $abidw_flags --out-file "$tmp/now.abi" "$lib" || exit 1
# Everything but additions: any difference here breaks programs built before.
abidiff --suppressions "$suppr" --no-added-syms "$baseline" "$tmp/now.abi" > "$tmp/report" 2>&1
status=$?
if [ $status -ne 0 ]; then
    echo "check_abi: $lib is not compatible with $baseline (abidiff status $status):"
    sed 's/^/  /' "$tmp/report"
    echo "check_abi: keep the ABI, or change the soname's major version (docs/abi.md)"
    exit 1
fi
abidiff --suppressions "$suppr" "$baseline" "$tmp/now.abi" > "$tmp/report" 2>&1
if [ $? -ne 0 ]; then
    echo "check_abi: compatible, with additions (write the baseline again with the minor version that adds them: make abi-baseline):"
    sed 's/^/  /' "$tmp/report"
    exit 0
fi
echo "check_abi: $(basename "$lib") has the ABI of $(basename "$baseline")"
