#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package, as a user gets it: `cpack -G DEB` in the build tree makes exactly one .deb, which is
# unpacked (dpkg-deb -x) into a temporary root; the CLI and the GUI's scripted mode then run from that root
# on the packaged demo pair, so the programs must find their plugins and data relative to their prefix.
# Lintian, when installed, must report no errors. Exit 77 (skipped) without cpack or dpkg-deb.
# Usage: test_deb.sh BUILD_DIR CPACK
set -euo pipefail
build=$1
cpack=$2
command -v dpkg-deb >/dev/null && [[ -x $cpack ]] || { echo "SKIP: no cpack or dpkg-deb"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/probescope-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# -B keeps _CPack_Packages out of the build tree; the build is already up to date, so this only installs.
(cd "$build" && "$cpack" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
mapfile -t debs < <(find "$work/out" -maxdepth 1 -name '*.deb')
[[ ${#debs[@]} -eq 1 ]] || fail "expected one .deb, got ${#debs[@]}: ${debs[*]}"
deb=${debs[0]}
echo "package: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Architecture Depends

root=$work/root
dpkg-deb -x "$deb" "$root"
usr=$root/usr
for f in bin/probescope bin/probescope-cli bin/probescope-example-train \
         lib/probescope/libprobescope-runut.so lib/probescope/libprobescope-cli-runut.so \
         lib/libprobescope_collect.a lib/cmake/ProbeScopeCollect/ProbeScopeCollectConfig.cmake \
         include/probescope/collect/precisiondebugger.h \
         share/probescope/demo/npu/step0/rank/dump.json share/probescope/demo/bench/step0/rank/dump.json \
         share/applications/probescope.desktop share/metainfo/probescope.metainfo.xml \
         share/icons/hicolor/scalable/apps/probescope.svg share/icons/hicolor/48x48/apps/probescope.png \
         share/icons/hicolor/256x256/apps/probescope.png \
         share/doc/probescope/copyright share/doc/probescope/changelog.gz; do
    [[ -e $usr/$f ]] || fail "missing /usr/$f in the package"
done
dpkg-deb -f "$deb" Depends | grep -q 'libqt6widgets6' || fail "Depends does not name Qt (dpkg-shlibdeps)"

demo=$usr/share/probescope/demo
"$usr/bin/probescope-cli" info "$demo/npu/step0/rank" >"$work/info.txt" || fail "probescope-cli info"
grep -q 'entries: ' "$work/info.txt" || fail "info printed no dump.json: $(head -5 "$work/info.txt")"
"$usr/bin/probescope-cli" compare --npu "$demo/npu/step0" --bench "$demo/bench/step0" -o "$work/cmp" \
    >"$work/compare.txt" || fail "probescope-cli compare"
grep -q 'Aten.gelu.0.forward' "$work/compare.txt" || fail "compare did not name the first failing node: $(cat "$work/compare.txt")"
ls "$work/cmp"/compare_result_*.csv >/dev/null || fail "compare wrote no CSV"

# The scripted mode never asks anything and prints the selected node as its last line; --demo finds
# the packaged pair next to the binary.
for args in "$demo/npu $demo/bench" "--demo"; do
    # shellcheck disable=SC2086
    out=$(QT_QPA_PLATFORM=offscreen "$usr/bin/probescope" --screenshot "$work/gui.png" $args) \
        || fail "probescope --screenshot $args"
    [[ $(tail -n 1 <<<"$out") == Aten.gelu.0.forward ]] || fail "scripted mode printed '$out'"
    [[ -s $work/gui.png ]] || fail "no screenshot written"
    rm -f "$work/gui.png"
done

if command -v lintian >/dev/null; then
    # Errors fail the test; warnings (no manual page, hardening flags of LibTorch's headers) are listed.
    lintian --fail-on error "$deb" | tee "$work/lintian.txt" \
        || fail "lintian reported errors"
else
    echo "lintian not installed: not checked"
fi
echo "package OK"
