#!/usr/bin/env bash
# The package test (CTest "package", label "package"; registered by packaging/CMakeLists.txt).
#
#   test_package.sh --build-dir DIR --cpack CPACK --version V
#
# Builds the .deb from the existing build tree with cpack (into DIR/packaging/package-test; it
# never builds the project), then checks
#   * the control fields (name, version, architecture, maintainer, description, computed Depends);
#   * the contents (programs, GEMM libraries, desktop entry, icons, metainfo, MIME types, man
#     pages, examples, targets, copyright, changelog);
#   * the extracted package: a release build (no sanitizer runtime), RPATH and library resolution, `--version` of each program, a run of
#     an installed example, the man pages render without warnings;
#   * lintian (no errors; warnings are printed), desktop-file-validate, appstreamcli validate
#     --no-net, the MIME XML through update-mime-database.
# Exits 77 (CTest: skipped) with a message when a tool is missing.
set -uo pipefail

BUILD_DIR="" CPACK="" VERSION=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --build-dir) BUILD_DIR="$2"; shift 2 ;;
        --cpack) CPACK="$2"; shift 2 ;;
        --version) VERSION="$2"; shift 2 ;;
        *) echo "test_package.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n "$BUILD_DIR" && -n "$CPACK" && -n "$VERSION" ]] || { echo "test_package.sh: missing arguments" >&2; exit 2; }

FAILURES=0
fail() { printf 'FAIL: %s\n' "$*"; FAILURES=$((FAILURES + 1)); }
pass() { printf 'ok:   %s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }

# --- Tools ---------------------------------------------------------------------------------------
missing=()
for tool in "$CPACK" dpkg-deb dpkg-shlibdeps lintian desktop-file-validate appstreamcli \
            update-mime-database readelf man gzip; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "SKIPPED: missing tools: ${missing[*]}"
    echo "(packaging/setup.sh deps installs them: dpkg-dev lintian desktop-file-utils appstream"
    echo " shared-mime-info binutils man-db)"
    exit 77
fi

# --- Build the package ----------------------------------------------------------------------------
OUT="$BUILD_DIR/packaging/package-test"
rm -rf "$OUT"
mkdir -p "$OUT"
section "cpack -G DEB"
start=$SECONDS
# `cpack -G DEB` as documented, except that the build tree is installed through its install
# script instead of as a CMake project: the project route first builds the `preinstall` target
# (all of it), and this test must never build (other tests run on the same tree meanwhile).
# The install script, the strip and the DEB generator (dpkg-shlibdeps, control, md5sums) are
# the same.
if ! "$CPACK" --config "$BUILD_DIR/CPackConfig.cmake" -G DEB -B "$OUT" \
        -D CPACK_INSTALL_CMAKE_PROJECTS= -D "CPACK_INSTALL_SCRIPTS=$BUILD_DIR/cmake_install.cmake" \
        -D CPACK_INSTALL_PREFIX=/usr -D CMAKE_INSTALL_DO_STRIP=1 >"$OUT/cpack.log" 2>&1; then
    cat "$OUT/cpack.log"
    echo "FAIL: cpack failed"
    exit 1
fi
shopt -s nullglob
debs=("$OUT"/hloscope_*.deb)
if [[ ${#debs[@]} -ne 1 ]]; then
    cat "$OUT/cpack.log"
    echo "FAIL: expected one hloscope_*.deb in $OUT, found ${#debs[@]}"
    exit 1
fi
DEB="${debs[0]}"
pass "$(basename "$DEB"): $(du -k "$DEB" | cut -f1) KiB, in $((SECONDS - start)) s"

# --- Control fields ------------------------------------------------------------------------------
section "control fields"
field() { dpkg-deb -f "$DEB" "$1"; }
ARCH="$(dpkg --print-architecture)"
[[ "$(field Package)" == hloscope ]] && pass "Package: hloscope" || fail "Package is '$(field Package)'"
[[ "$(field Version)" == "$VERSION" ]] && pass "Version: $VERSION" || fail "Version is '$(field Version)', expected $VERSION"
[[ "$(field Architecture)" == "$ARCH" ]] && pass "Architecture: $ARCH" || fail "Architecture is '$(field Architecture)'"
for f in Maintainer Description Section Priority Installed-Size; do
    [[ -n "$(field "$f")" ]] && pass "$f present" || fail "no $f field"
done
DEPENDS="$(field Depends)"
echo "Depends: $DEPENDS"
if [[ -z "$DEPENDS" ]]; then
    fail "Depends is empty (CPACK_DEBIAN_PACKAGE_SHLIBDEPS did not run?)"
else
    # Libraries every build links: computed by dpkg-shlibdeps, so with versions.
    names="$(tr ',|' '\n\n' <<<"$DEPENDS" | awk '{print $1}')"
    for pkg in libc6 libstdc++6 libqt6widgets6 libqt6svg6 libllvm19 libgvc6 libsqlite3-0; do
        grep -qxF "$pkg" <<<"$names" && pass "Depends names $pkg" || fail "Depends does not name $pkg"
    done
    grep -q "(>= " <<<"$DEPENDS" && pass "Depends carries versions (computed)" \
        || fail "Depends has no versions: not computed by dpkg-shlibdeps?"
fi

# --- Contents ------------------------------------------------------------------------------------
section "contents"
dpkg-deb -c "$DEB" >"$OUT/contents.txt"
has() { grep -Eq " \./$1( |$)" "$OUT/contents.txt"; }
expected=(
    usr/bin/hloscope usr/bin/hloscope-cli usr/bin/hloscope-gpu-runner
    usr/share/applications/hloscope.desktop
    usr/share/metainfo/hloscope.metainfo.xml
    usr/share/mime/packages/hloscope.xml
    usr/share/icons/hicolor/scalable/apps/hloscope.svg
    usr/share/man/man1/hloscope.1.gz usr/share/man/man1/hloscope-cli.1.gz
    usr/share/man/man1/hloscope-gpu-runner.1.gz
    usr/share/hloscope/examples/mlp.hlo usr/share/hloscope/examples/index.json
    usr/share/hloscope/targets/h100.json usr/share/hloscope/targets/cpu.json
    usr/share/doc/hloscope/copyright usr/share/doc/hloscope/changelog.gz
)
for size in 16 24 32 48 64 128 256; do
    expected+=("usr/share/icons/hicolor/${size}x${size}/apps/hloscope.png")
done
if [[ "$ARCH" == amd64 ]]; then
    expected+=(usr/lib/hloscope/libhloscope_gemm_avx2.so usr/lib/hloscope/libhloscope_gemm_avx512.so)
fi
for path in "${expected[@]}"; do
    has "$path" && pass "$path" || fail "missing /$path"
done
grep -q "/usr/local" "$OUT/contents.txt" && fail "files under /usr/local" || pass "nothing under /usr/local"

# --- The extracted package -----------------------------------------------------------------------
section "extracted package"
ROOT="$OUT/root"
dpkg-deb -x "$DEB" "$ROOT"
for program in hloscope hloscope-cli hloscope-gpu-runner; do
    bin="$ROOT/usr/bin/$program"
    runpath="$(readelf -d "$bin" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')"
    if [[ "$program" != hloscope-gpu-runner && "$runpath" != '$ORIGIN/../lib/hloscope'* ]]; then
        fail "$program: RUNPATH '$runpath', expected \$ORIGIN/../lib/hloscope first"
    fi
    # (grep reads all of readelf's output: with -q and pipefail, readelf's SIGPIPE fails the pipe)
    if readelf -S "$bin" | grep '\.debug_info' >/dev/null; then fail "$program is not stripped"; fi
    # A package is made from the release build: a sanitizer runtime in a program means it was
    # made from an instrumented tree (build-asan, build-tsan).
    if readelf --dyn-syms -W "$bin" | grep -E ' (__asan_init|__tsan_init|__msan_init|__ubsan_handle_[a-z_]+)$' >/dev/null; then
        fail "$program carries a sanitizer runtime: the package must be made from a release build"
    else
        pass "$program: a release build (no sanitizer runtime)"
    fi
    unresolved="$(ldd "$bin" 2>&1 | grep 'not found')"
    [[ -z "$unresolved" ]] && pass "$program: every library resolves" || fail "$program: $unresolved"
done
v="$("$ROOT/usr/bin/hloscope-cli" --version)"
[[ "$v" == "hloscope-cli $VERSION" ]] && pass "hloscope-cli --version: $v" || fail "hloscope-cli --version printed '$v'"
v="$(QT_QPA_PLATFORM=offscreen "$ROOT/usr/bin/hloscope" --version 2>/dev/null)"
[[ "$v" == "hloscope $VERSION" ]] && pass "hloscope --version: $v" || fail "hloscope --version printed '$v'"
v="$("$ROOT/usr/bin/hloscope-gpu-runner" --version | head -1)"
[[ "$v" == "hloscope-gpu-runner $VERSION" ]] && pass "hloscope-gpu-runner --version: $v" \
    || fail "hloscope-gpu-runner --version printed '$v'"
# The installed CLI runs an installed example on the CPU JIT (GEMM libraries from lib/hloscope).
if run_out="$("$ROOT/usr/bin/hloscope-cli" run "$ROOT/usr/share/hloscope/examples/mlp.hlo" \
        --device cpu --repeat 1 --warmup 0 --check 2>&1)"; then
    pass "hloscope-cli run examples/mlp.hlo --device cpu --check"
else
    fail "hloscope-cli run of the installed mlp example failed:"
    echo "$run_out" | tail -20
fi
if est_out="$("$ROOT/usr/bin/hloscope-cli" estimate "$ROOT/usr/share/hloscope/examples/softmax.hlo" \
        --target "$ROOT/usr/share/hloscope/targets/h100.json" 2>&1)"; then
    pass "hloscope-cli estimate with the installed h100.json"
else
    fail "hloscope-cli estimate --target targets/h100.json failed:"
    echo "$est_out" | tail -20
fi
# Each man page renders without warnings and says what --help says: every line of the
# program's --help (less the usage lines and section headings, which the page rewrites)
# appears in the rendered page, whitespace aside.
squash() { tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }
for page in hloscope hloscope-cli hloscope-gpu-runner; do
    file="$ROOT/usr/share/man/man1/$page.1.gz"
    warnings="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$file" 2>&1 >/dev/null)"
    rendered="$(LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$file" 2>/dev/null | squash)"
    help="$(QT_QPA_PLATFORM=offscreen "$ROOT/usr/bin/$page" --help 2>/dev/null)"
    absent=0 checked=0
    in_usage=0
    while IFS= read -r line; do
        if [[ "$line" =~ ^[Uu]sage: ]]; then in_usage=1; continue; fi
        if [[ $in_usage -eq 1 && "$line" =~ ^[[:space:]] ]]; then continue; fi
        in_usage=0
        [[ -z "${line// /}" || "$line" =~ ^[A-Za-z\ ]+:$ ]] && continue
        squashed="$(squash <<<"$line")"
        checked=$((checked + 1))
        if [[ "$rendered" != *"$squashed"* ]]; then
            absent=$((absent + 1))
            [[ $absent -le 3 ]] && echo "   not in man $page: $squashed"
        fi
    done <<<"$help"
    if [[ -n "$warnings" ]]; then
        fail "man $page: $warnings"
    elif [[ $checked -lt 3 || $absent -gt 0 || "$rendered" != *NAME* || "$rendered" != *SYNOPSIS* ]]; then
        fail "man $page: $absent of $checked --help lines missing (or no NAME/SYNOPSIS)"
    else
        pass "man $page: renders without warnings, all $checked lines of --help in it"
    fi
done
# Each PNG icon has the size its folder says (width and height from the IHDR chunk).
for size in 16 24 32 48 64 128 256; do
    png="$ROOT/usr/share/icons/hicolor/${size}x${size}/apps/hloscope.png"
    [[ -f "$png" ]] || continue
    dims="$(od -An -tu1 -j16 -N8 "$png" | awk '{print $3*256+$4 "x" $7*256+$8}')"
    [[ "$dims" == "${size}x${size}" ]] && pass "icon ${size}x${size}" || fail "icon ${size}x${size} is $dims"
done

# --- Validators ----------------------------------------------------------------------------------
section "desktop-file-validate"
desktop="$ROOT/usr/share/applications/hloscope.desktop"
if out="$(desktop-file-validate "$desktop" 2>&1)" && [[ -z "$out" ]]; then
    pass "hloscope.desktop"
else
    fail "desktop-file-validate: $out"
fi
section "appstreamcli validate --no-net"
# The one override: our component ID is the program's name, not a reverse-DNS name, because the
# project has no domain of its own yet; a later rename keeps `hloscope` in <provides><id>.
if out="$(appstreamcli validate --no-net --override=cid-desktopapp-is-not-rdns=info \
        "$ROOT/usr/share/metainfo/hloscope.metainfo.xml" 2>&1)"; then
    pass "hloscope.metainfo.xml"
    echo "$out"
else
    fail "appstreamcli validate:"
    echo "$out"
fi
section "MIME types"
mimedir="$OUT/mime"
mkdir -p "$mimedir/packages"
cp "$ROOT/usr/share/mime/packages/hloscope.xml" "$mimedir/packages/"
if out="$(XDG_DATA_DIRS="$OUT" update-mime-database "$mimedir" 2>&1)" && [[ -z "$out" ]]; then
    pass "update-mime-database accepts hloscope.xml"
else
    fail "update-mime-database: $out"
fi
mimetypes="$(sed -n 's/^MimeType=//p' "$desktop" | tr ';' ' ')"
[[ -n "$mimetypes" ]] || fail "hloscope.desktop has no MimeType"
for type in $mimetypes; do
    [[ -f "$mimedir/$type.xml" ]] && pass "$type defined" || fail "$type (in hloscope.desktop) is not defined by hloscope.xml"
    grep -q "<mediatype>$type</mediatype>" "$ROOT/usr/share/metainfo/hloscope.metainfo.xml" \
        || fail "$type is not in the metainfo's <provides>"
done
glob_of() { sed -n "s|^[0-9]*:$1:\\(.*\\)|\\1|p" "$mimedir/globs2"; }
[[ "$(glob_of text/x-hlo)" == "*.hlo" ]] && pass "*.hlo is text/x-hlo" || fail "*.hlo is not text/x-hlo"
[[ "$(glob_of text/x-mlir)" == "*.mlir" ]] && pass "*.mlir is text/x-mlir" || fail "*.mlir is not text/x-mlir"

section "lintian"
# Lintian's default profile; the package's one override, with its reason, is
# packaging/debian/lintian-overrides. Errors fail; warnings print.
lintian --fail-on error --display-level ">=warning" "$DEB" >"$OUT/lintian.log" 2>&1
lintian_rc=$?
lintian_out="$(grep -v '^running with root privileges' "$OUT/lintian.log")"
echo "${lintian_out:-(no tags)}"
errors="$(grep -c '^E: ' <<<"$lintian_out")"
warnings="$(grep -c '^W: ' <<<"$lintian_out")"
if [[ $lintian_rc -eq 0 && $errors -eq 0 ]]; then
    pass "lintian: 0 errors, $warnings warnings"
else
    fail "lintian: $errors errors (exit $lintian_rc)"
fi

echo
if [[ $FAILURES -gt 0 ]]; then
    echo "$FAILURES check(s) failed"
    exit 1
fi
echo "package test passed: $DEB"
