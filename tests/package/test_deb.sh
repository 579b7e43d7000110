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
# The main package, and the MPI plugin's package when the tree built it (Open MPI found).
mapfile -t debs < <(find "$work/out" -maxdepth 1 -name 'probescope_*.deb')
[[ ${#debs[@]} -eq 1 ]] || fail "expected one probescope_*.deb, got ${#debs[@]}: ${debs[*]}"
deb=${debs[0]}
mapfile -t mpidebs < <(find "$work/out" -maxdepth 1 -name 'probescope-mpi_*.deb')
[[ -e $build/lib/probescope/libprobescope-cli-mpi.so ]] && want_mpi=1 || want_mpi=0
[[ ${#mpidebs[@]} -eq $want_mpi ]] || fail "expected $want_mpi probescope-mpi_*.deb, got ${#mpidebs[@]}"
mapfile -t pydebs < <(find "$work/out" -maxdepth 1 -name 'python3-probescope_*.deb')
compgen -G "$build/python/probescope/_C*.so" >/dev/null && want_py=1 || want_py=0
[[ ${#pydebs[@]} -eq $want_py ]] || fail "expected $want_py python3-probescope_*.deb, got ${#pydebs[@]}"
others=$(find "$work/out" -maxdepth 1 -name '*.deb' | wc -l)
[[ $others -eq $((1 + want_mpi + want_py)) ]] || fail "unexpected packages: $(ls "$work/out")"
echo "package: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Architecture Maintainer Depends Recommends

# The control file as a user reads it (apt show): the Description's continuation lines start with a space and
# text, never with the ';' of a CMake list; no Homepage or Maintainer address the project does not have; MPI is
# no hard dependency of the main package.
control=$(dpkg-deb -f "$deb")
grep -q '^ ;' <<<"$control" && fail "Description has ';' at the start of a line: $(dpkg-deb -f "$deb" Description)"
[[ $(dpkg-deb -f "$deb" Description | wc -l) -ge 4 ]] || fail "Description lost its long text"
[[ -z $(dpkg-deb -f "$deb" Homepage) ]] || fail "Homepage names a site the project does not have"
dpkg-deb -f "$deb" Maintainer | grep -q 'noreply.github.com' && fail "Maintainer names an address that does not exist"
# Without PROBESCOPE_PACKAGE_MAINTAINER the address is in the reserved .invalid domain: visibly no address.
grep -q 'PROBESCOPE_PACKAGE_MAINTAINER:STRING=ProbeScope local build' "$build/CMakeCache.txt" \
    && { dpkg-deb -f "$deb" Maintainer | grep -q '\.invalid>$' || fail "Maintainer: $(dpkg-deb -f "$deb" Maintainer)"; }
dpkg-deb -f "$deb" Depends | grep -qi 'mpi' && fail "the main package depends on MPI: $(dpkg-deb -f "$deb" Depends)"
if [[ $want_mpi -eq 1 ]]; then
    dpkg-deb -f "$deb" Recommends | grep -q 'probescope-mpi' || fail "probescope does not recommend probescope-mpi"
    mpideb=${mpidebs[0]}
    dpkg-deb -f "$mpideb" Depends | grep -q 'libopenmpi' || fail "probescope-mpi does not depend on Open MPI"
    dpkg-deb -f "$mpideb" Depends | grep -q 'probescope (= ' || fail "probescope-mpi does not depend on probescope"
    dpkg-deb -f "$mpideb" | grep -q '^ ;' && fail "probescope-mpi's Description has ';' lines"
    # Listings read whole into a variable: grep -q on a pipe would end dpkg-deb early (SIGPIPE under pipefail).
    mpilist=$(dpkg-deb -c "$mpideb")
    mainlist=$(dpkg-deb -c "$deb")
    grep -q 'lib/probescope/libprobescope-cli-mpi.so' <<<"$mpilist" || fail "probescope-mpi lacks the plugin"
    grep -q 'libprobescope-cli-mpi.so' <<<"$mainlist" && fail "the main package holds the MPI plugin"
fi

root=$work/root
dpkg-deb -x "$deb" "$root"
usr=$root/usr
for f in bin/probescope bin/probescope-cli bin/probescope-example-train \
         lib/probescope/libprobescope-runut.so lib/probescope/libprobescope-cli-runut.so \
         lib/libprobescope_collect.a lib/cmake/ProbeScopeCollect/ProbeScopeCollectConfig.cmake \
         include/probescope/collect/precisiondebugger.h include/probescope/collect/trainermon.h \
         share/probescope/demo/npu/step0/rank/dump.json share/probescope/demo/bench/step0/rank/dump.json \
         share/applications/probescope.desktop share/metainfo/probescope.metainfo.xml \
         share/icons/hicolor/scalable/apps/probescope.svg share/icons/hicolor/48x48/apps/probescope.png \
         share/icons/hicolor/256x256/apps/probescope.png \
         share/doc/probescope/copyright share/doc/probescope/changelog.gz; do
    [[ -e $usr/$f ]] || fail "missing /usr/$f in the package"
done
dpkg-deb -f "$deb" Depends | grep -q 'libqt6widgets6' || fail "Depends does not name Qt (dpkg-shlibdeps)"
# The Python module, when the tree built it (pybind11-dev and python3-dev present): its own package,
# python3-probescope, in Debian's python3 path, importable from the unpacked root with Debian's python3 and
# torch; the main package neither holds it nor depends on torch.
dpkg-deb -f "$deb" Depends | grep -q 'python3-torch' && fail "the main package depends on python3-torch"
grep -q 'dist-packages/probescope' <<<"$(dpkg-deb -c "$deb")" && fail "the main package holds the Python module"
if [[ $want_py -eq 1 ]]; then
    pydeb=${pydebs[0]}
    dpkg-deb -f "$pydeb" Depends | grep -q 'python3-torch' || fail "python3-probescope does not depend on python3-torch"
    dpkg-deb -f "$pydeb" | grep -q '^ ;' && fail "python3-probescope's Description has ';' lines"
    dpkg-deb -x "$pydeb" "$root"
    pydir=$usr/lib/python3/dist-packages
    compgen -G "$pydir/probescope/_C*.so" >/dev/null || fail "missing the Python module in /usr/lib/python3/dist-packages"
    PYTHONPATH=$pydir /usr/bin/python3 -c "from probescope.pytorch import PrecisionDebugger, TrainerMon, seed_all" \
        || fail "the packaged Python module does not import"
fi

demo=$usr/share/probescope/demo
"$usr/bin/probescope-cli" info "$demo/npu/step0/rank" >"$work/info.txt" || fail "probescope-cli info"
grep -q 'entries: ' "$work/info.txt" || fail "info printed no dump.json: $(head -5 "$work/info.txt")"
"$usr/bin/probescope-cli" compare --npu "$demo/npu/step0" --bench "$demo/bench/step0" -o "$work/cmp" \
    >"$work/compare.txt" || fail "probescope-cli compare"
grep -q 'Aten.gelu.0.forward' "$work/compare.txt" || fail "compare did not name the first failing node: $(cat "$work/compare.txt")"
ls "$work/cmp"/compare_result_*.csv >/dev/null || fail "compare wrote no CSV"

# Under an MPI launcher without the MPI package, the CLI says which package to install (and does not pick up the
# plugin of the build tree it was compiled in).
set +e
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$usr/bin/probescope-cli" compare --npu "$demo/npu" \
    --bench "$demo/bench" -o "$work/mpi" >"$work/mpi.txt" 2>&1
status=$?
set -e
[[ $status -ne 0 ]] || fail "a launcher without the MPI plugin was not reported: $(cat "$work/mpi.txt")"
grep -q 'apt install probescope-mpi' "$work/mpi.txt" || fail "no hint to install probescope-mpi: $(cat "$work/mpi.txt")"

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
