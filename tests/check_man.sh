#!/bin/sh
# SPDX-License-Identifier: MIT
# check_man.sh: the manual pages (docs/man) cover the API and render cleanly.
#
#   1. every name tools/api_symbols.sh finds in the public headers
#      (include/stdcl.h, include/stdcl_cache.h), and every
#      function-like macro of the API (a lower-case `#define name(` there:
#      clforka, clarg_set, clndrange_init1d ...), has a page or a .so link
#      docs/man/man3/<name>.3;
#   2. every .so link is the one line `.so manN/page.N`, naming a full page
#      that exists and lists the link's name in its NAME section;
#   3. every page renders without a warning: `mandoc -Tlint -W warning` and
#      `groff -ww -z -man` print nothing (for the full pages: a link renders
#      its target, and mandoc flags every .so request as "fragile" by
#      design);
#   4. every reference to a libstdcl page (`.BR name (N)`: in section 3 a
#      cl* or std* name, in 1 and 7 a stdcl* name or a tool of src/) names
#      a page that exists;
#   5. every code excerpt of a program marked `from examples/DIR/FILE` in a
#      page or in README.md is that program's lines between its
#      `/* page: begin */` and `/* page: end */` markers (the tests build
#      and run the program);
#   6. with the build in $BUILD_DIR (default build), `make install
#      PREFIX=<tmp> DESTDIR=` installs the pages under <tmp>/share/man,
#      `man -M <tmp>/share/man clsym` shows the clopen family page and
#      `man -M <tmp>/share/man stdcl` the overview, and `make uninstall`
#      removes every page again (skipped with STDCL_CHECK_MAN_NO_INSTALL=1).
#
# Run by tools/run_tests.sh as one more test, like check_exports.sh; prints
# every problem and exits 1 if there is one.  Needs mandoc, groff and man
# (tools/install_deps.sh installs them).
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in "$top"/*) build=${build#"$top"/} ;; esac   # as make knows it
man=$top/docs/man
header=$top/include/stdcl.h
status=0
problem() { echo "check_man: $*"; status=1; }

for tool in mandoc groff man; do
    if ! command -v $tool > /dev/null 2>&1; then
        echo "check_man: $tool is not installed (run tools/install_deps.sh)"
        exit 1
    fi
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# A .so link: a file whose first line is a .so request (no process: the
# check runs on busy machines, where each process costs).
is_link() {
    first=
    read -r first < "$1" || true
    case $first in .so\ *) return 0 ;; *) return 1 ;; esac
}

# 1. Every exported name and API macro has a page.
{ sh "$top/tools/api_symbols.sh" || echo "(api_symbols failed)"
  sed -n 's/^#define \([a-z][a-z0-9_]*\)(.*/\1/p' "$header"; } \
    | LC_ALL=C sort -u > "$tmp/names"
nnames=0
while read -r name; do
    nnames=$((nnames + 1))
    [ -f "$man/man3/$name.3" ] || problem "$name (include/) has no page: add docs/man/man3/$name.3 (a page or a .so link)"
done < "$tmp/names"

# 2. Every link is one .so line naming a full page that lists the link.
# The names each full page lists in its NAME section, as "manN/page.N name".
awk '/^\.SH NAME/ { getline line; sub(/ \\-.*/, "", line); gsub(/,/, " ", line)
                    n = split(line, w, " ")
                    rel = FILENAME; sub(/.*\/man\//, "", rel)
                    for (i = 1; i <= n; ++i) print rel " " w[i] }' \
    "$man"/man[1-9]/*.[1-9] > "$tmp/listed"
npages=0
nlinks=0
: > "$tmp/pages"
for f in "$man"/man[1-9]/*.[1-9]; do
    [ -f "$f" ] || continue
    rel=${f#"$man"/}
    name=${f##*/}; name=${name%.*}
    if ! is_link "$f"; then
        npages=$((npages + 1))
        echo "$rel" >> "$tmp/pages"
        continue
    fi
    nlinks=$((nlinks + 1))
    target=${first#.so }
    case $target in
        man[1-9]/*.[1-9]) ;;
        *) target= ;;
    esac
    if [ -z "$target" ] || [ "$(wc -l < "$f")" -ne 1 ]; then
        problem "$rel: a link must be the one line '.so manN/page.N'"
    elif [ ! -f "$man/$target" ]; then
        problem "$rel: links to $target, which does not exist"
    elif is_link "$man/$target"; then
        problem "$rel: links to $target, which is itself a link"
    elif ! grep -qx "$target $name" "$tmp/listed"; then
        problem "$rel: $target does not list $name in its NAME section"
    fi
done
[ $npages -gt 0 ] || problem "no pages under $man"

# 3. Every full page renders cleanly (a link renders its target).
if [ $npages -gt 0 ]; then
    # shellcheck disable=SC2046
    (cd "$man" && mandoc -Tlint -W warning $(cat "$tmp/pages")) > "$tmp/lint" 2>&1
    if [ -s "$tmp/lint" ]; then
        problem "mandoc -Tlint -W warning:"
        sed 's/^/  /' "$tmp/lint"
    fi
fi
while read -r rel; do
    (cd "$man" && groff -ww -z -man "$rel") > "$tmp/groff" 2>&1
    if [ -s "$tmp/groff" ]; then
        problem "$rel: groff -ww -z -man:"
        sed 's/^/  /' "$tmp/groff"
    fi
done < "$tmp/pages"

# 4. References to libstdcl pages resolve: in section 3 every cl* and
#    std* name, in sections 1 and 7 every stdcl* name and the tools of src/.
tools=" $(for f in "$top"/src/*.c "$top"/src/*.cpp; do [ -f "$f" ] && basename "${f%.*}"; done | tr '\n' ' ')"
# shellcheck disable=SC2046
(cd "$man" && grep -H '^\.BR [a-z][a-z0-9_\\-]* ([1-9])' $(cat "$tmp/pages")) \
    | sed 's/^\([^:]*\):\.BR \([^ ]*\) (\([1-9]\)).*/\1 \2 \3/; s/\\-/-/g' \
    | while read -r rel ref sec; do
        case $sec:$ref in
            3:cl*|3:std*) ;;
            [17]:stdcl*) ;;
            [17]:*) case $tools in *" $ref "*) ;; *) continue ;; esac ;;
            *) continue ;;
        esac
        [ -f "$man/man$sec/$ref.$sec" ] || echo "check_man: $rel: refers to $ref($sec), which has no page"
    done > "$tmp/refs"
if [ -s "$tmp/refs" ]; then cat "$tmp/refs"; status=1; fi

# 5. A code excerpt marked "from examples/DIR/FILE" (in a page, the first
#    line of an .EX block: `/* from examples/... */`; in README.md, a line
#    `<!-- from examples/... -->` before a fenced block) is that program's
#    lines between `/* page: begin */` and `/* page: end */`, line for line
#    (less the begin marker's indentation; a page writes \ as \e): the
#    program is built and run by the tests, so the excerpt compiles and works.
nexcerpts=0
excerpt_region() {  # FILE: its marked lines, unindented
    awk '/\/\* page: end \*\//{p=0} p{sub("^" ind, ""); print} /\/\* page: begin \*\//{p=1; ind=$0; sub(/[^ ].*/, "", ind)}' "$1"
}
for f in "$man"/man[1-9]/*.[1-9] "$top/README.md"; do
    for src in $(sed -n 's|^/\* from \(examples/[^ ]*\) \*/$|\1|p; s|^<!-- from \(examples/[^ ]*\) -->$|\1|p' "$f" | sort -u); do
        nexcerpts=$((nexcerpts + 1))
        rel=${f#"$top"/}
        if [ ! -f "$top/$src" ] || ! grep -q '/\* page: begin \*/' "$top/$src"; then
            problem "$rel: excerpt of $src, which does not exist or has no /* page: begin */ line"
            continue
        fi
        excerpt_region "$top/$src" > "$tmp/region"
        # Every excerpt of src in f (a page or the README may quote it twice).
        awk -v m1="/* from $src */" -v m2="<!-- from $src -->" -v dir="$tmp/excerpt" '
            $0 == m1 { n++; out = dir "." n; printf "" > out; mode = "man"; next }
            $0 == m2 { n++; out = dir "." n; printf "" > out; mode = "md"; fence = 0; next }
            mode == "man" { if ($0 == ".EE") { mode = ""; next } gsub(/\\e/, "\\"); print > out; next }
            mode == "md" { if ($0 ~ /^```/) { if (fence++) mode = ""; next } print > out }
        ' "$f"
        for e in "$tmp"/excerpt.*; do
            if ! diff -u "$tmp/region" "$e" > "$tmp/excerpt-diff"; then
                problem "$rel: its excerpt of $src differs from the program's page: begin..end lines:"
                sed 's/^/  /' "$tmp/excerpt-diff"
            fi
            rm -f "$e"
        done
    done
done

# 6. make install / uninstall, and man(1) finds the pages.
install_note="; install not checked (STDCL_CHECK_MAN_NO_INSTALL=1)"
if [ "${STDCL_CHECK_MAN_NO_INSTALL:-0}" != 1 ]; then
    install_note="; make install, man -M and make uninstall checked"
    prefix=$tmp/prefix
    mandir=$prefix/share/man
    if ! make -C "$top" --no-print-directory -s install BUILD="$build" \
            PREFIX="$prefix" DESTDIR= > "$tmp/install.log" 2>&1; then
        problem "make install PREFIX=$prefix DESTDIR= failed:"
        sed 's/^/  /' "$tmp/install.log"
    else
        # Installed as written, except the footer, which names the version.
        version=$(cat "$top/VERSION")
        for f in "$man"/man[1-9]/*.[1-9]; do
            rel=${f#"$man"/}
            sed "/^\.TH /s/\"libstdcl\"/\"libstdcl $version\"/" "$f" > "$tmp/want"
            cmp -s "$tmp/want" "$mandir/$rel" || problem "make install: $mandir/$rel missing or different"
        done
        grep -q "^\.TH CLFORK 3 .*\"libstdcl $version\"" "$mandir/man3/clfork.3" ||
            problem "make install: clfork.3's footer does not name libstdcl $version"
        # man -M: the clopen family page, through the clsym link.
        MANPAGER=cat MANWIDTH=80 man -M "$mandir" clsym > "$tmp/clsym" 2> "$tmp/clsym.err"
        tr -s ' ' < "$tmp/clsym" > "$tmp/clsym.flat"
        if ! grep -q '^CLOPEN(3)' "$tmp/clsym.flat" ||
           ! grep -q 'clopen, clsopen, clopen_opt, clsopen_opt, clbuild, clsym, clclose -' "$tmp/clsym.flat"; then
            problem "man -M $mandir clsym does not show the clopen(3) page:"
            head -n 8 "$tmp/clsym" "$tmp/clsym.err" | sed 's/^/  /'
        fi
        MANPAGER=cat MANWIDTH=80 man -M "$mandir" stdcl 2> /dev/null | head -n 1 > "$tmp/stdcl"
        grep -q '^STDCL(7)' "$tmp/stdcl" || problem "man -M $mandir stdcl does not show stdcl(7): $(cat "$tmp/stdcl")"
        if ! make -C "$top" --no-print-directory -s uninstall BUILD="$build" \
                PREFIX="$prefix" DESTDIR= > "$tmp/uninstall.log" 2>&1; then
            problem "make uninstall PREFIX=$prefix DESTDIR= failed:"
            sed 's/^/  /' "$tmp/uninstall.log"
        fi
        left=$(find "$mandir" ! -type d 2> /dev/null | head -n 5)
        [ -z "$left" ] || problem "make uninstall left pages behind: $left"
    fi
fi

if [ $status -eq 0 ]; then
    echo "check_man: $nnames API names have pages; $npages pages and $nlinks links render cleanly; $nexcerpts program excerpts match their programs$install_note"
fi
exit $status
