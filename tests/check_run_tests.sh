#!/bin/sh
# SPDX-License-Identifier: MIT
# check_run_tests.sh: tools/run_tests.sh counts and reports what it should.
# Runs it on four stand-in programs (shell scripts that print what CMocka and
# the sanitizers print): one that passes, one with a CMocka failure, one with
# a LeakSanitizer leak report, one whose LeakSanitizer tracer fails the first
# time only; and checks the totals, that only the last ran again, and that
# each failure's reasons are repeated before the summary.  Run by
# tools/run_tests.sh as one more test.
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

fake() { # fake NAME BODY
    printf '#!/bin/sh\n%s\n' "$2" > "$tmp/$1"
    chmod +x "$tmp/$1"
}
fake test_pass 'echo "[  PASSED  ] 4 test(s)."'
fake test_fail 'echo "[ RUN      ] test_a"; echo "[  ERROR   ] --- 1 != 2"
echo "[  PASSED  ] 2 test(s)."; echo "[  FAILED  ] 1 test(s), listed below:"; echo "[  FAILED  ] test_a"; exit 1'
fake test_leak 'echo "[  PASSED  ] 3 test(s)."; echo "==1==ERROR: LeakSanitizer: detected memory leaks" >&2
echo "SUMMARY: AddressSanitizer: 8 byte(s) leaked in 1 allocation(s)." >&2; exit 23'
fake test_tracer "n=\$(cat $tmp/count 2>/dev/null || echo 0); echo \$((n + 1)) > $tmp/count
echo \"[  PASSED  ] 5 test(s).\"
[ \$n -eq 0 ] || exit 0
echo \"Tracer caught signal 11: addr=0x0\" >&2; echo \"==1==LeakSanitizer has encountered a fatal error.\" >&2; exit 1"

progs=$tmp/test_pass,$tmp/test_fail,$tmp/test_leak,$tmp/test_tracer
bash "$top/tools/run_tests.sh" "$progs" > "$tmp/out" 2>&1
rc=$?
status=0
want() { # want DESCRIPTION GREP-ARGS...: one expectation on the output
    what=$1
    shift
    if ! grep -q "$@" "$tmp/out"; then
        echo "check_run_tests: $what"
        status=1
    fi
}
[ $rc -eq 1 ] || { echo "check_run_tests: exit status $rc, want 1"; status=1; }
want "the last line is not '14 passed, 2 failed'" -x '14 passed, 2 failed'
want "the tracer failure did not run again" -x 'RAN AGAIN (LeakSanitizer failed, not the test): test_tracer'
want "the CMocka failure is not listed" -x 'FAILED: test_fail (1 failed)'
want "the leak is not listed" -x 'FAILED: test_leak (1 failed)'
want "the CMocka failure's reason is not repeated" -x -e '--- test_fail'
want "the leak's reason is not repeated" -x -e '--- test_leak'
[ "$(cat "$tmp/count")" = 2 ] || { echo "check_run_tests: test_tracer ran $(cat "$tmp/count") times, want 2"; status=1; }
if grep -q 'RAN AGAIN.*test_leak' "$tmp/out"; then
    echo "check_run_tests: a leak report was run again"
    status=1
fi
if [ "$(tail -n 1 "$tmp/out")" != "14 passed, 2 failed" ]; then
    echo "check_run_tests: the summary is not the last line"
    status=1
fi
[ $status -eq 0 ] || { echo "--- run_tests.sh printed:"; cat "$tmp/out"; }
exit $status
