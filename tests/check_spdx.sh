#!/bin/sh
# SPDX-License-Identifier: MIT
# check_spdx.sh: every file the project wrote names its license (an
# SPDX-License-Identifier line), except LICENSE itself, VERSION (read by
# configure), images, the ABI baseline (written by abidw), manual pages that
# are only links (.so lines), and the
# two Debian files whose format has no comments (debian/changelog,
# debian/source/format).
# Needs a git checkout (git ls-files); elsewhere (a release tarball) it says
# so and passes.  Run by tools/run_tests.sh.
top=$(cd "$(dirname "$0")/.." && pwd)
if ! git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "check_spdx: not a git checkout: nothing to check"
    exit 0
fi
# The files without the line (one grep over them all: the check runs on busy
# machines, where each process costs), less the exempt ones.
missing=$(cd "$top" && git ls-files -z | xargs -0 grep -L 'SPDX-License-Identifier: MIT' 2> /dev/null |
    while IFS= read -r f; do
        case $f in
            LICENSE | VERSION | *.png | *.abi | debian/changelog | debian/source/format) continue ;;
        esac
        first=
        read -r first < "$f" || true
        case $first in .so\ *) continue ;; esac
        echo "$f"
    done)
if [ -n "$missing" ]; then
    echo "check_spdx: no SPDX-License-Identifier line in:"
    echo "$missing" | sed 's/^/  /'
    exit 1
fi
echo "check_spdx: $(git -C "$top" ls-files | wc -l) tracked files, each with its license line or exempt"
