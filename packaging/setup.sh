#!/usr/bin/env bash
# hloscope set-up script (the one used by README.md and .ci/run).
#
#   packaging/setup.sh deps            install missing Debian packages (idempotent)
#   packaging/setup.sh build           deps + configure + build
#   packaging/setup.sh test            build + run every test (non-zero exit on failure)
#   packaging/setup.sh run [EXAMPLE]   build + open the hloscope GUI on a bundled example
#                                      (name, or a path to any module; default: mlp)
#   packaging/setup.sh package         build + cpack -G DEB: build/hloscope_VERSION_ARCH.deb
#   packaging/setup.sh sanitize        the sanitizer runs: the whole test suite under ASan+UBSan
#                                      with the fuzz smoke runs (build-asan), the threaded tests
#                                      under TSan (build-tsan); clang-14
#
# Environment: CI=true makes `test` run the ASan half of `sanitize` instead of the release
# build's tests, then the package test on a release build of the programs (CI's run, clang
# -Werror for the ASan build); HLOSCOPE_SANITIZE_TESTS=1 makes `test` run the
# release tests and all of `sanitize`; HLOSCOPE_JOBS overrides -j (2).
set -euo pipefail

# Debian 12 packages needed to build and test.
PACKAGES=(
    build-essential
    cmake
    ninja-build
    pkg-config
    qt6-base-dev
    qt6-svg-dev
    qt6-charts-dev
    libqt6opengl6-dev
    libgraphviz-dev
    nlohmann-json3-dev
    llvm-19-dev
    libeigen3-dev
    libjemalloc-dev     # the executables' allocator (CMakeLists.txt: HLOSCOPE_JEMALLOC)
    libsqlite3-dev
    xvfb
    xauth
    librsvg2-bin        # rsvg-convert: the PNG icons (packaging/CMakeLists.txt)
)

# What the package test (packaging/test_package.sh) needs besides the build packages:
# dpkg-deb/dpkg-shlibdeps, lintian and the desktop-file, AppStream and MIME validators.
TEST_PACKAGES=(
    dpkg-dev
    lintian
    desktop-file-utils
    appstream
    shared-mime-info
    man-db
)

# What the sanitizer builds need besides the build packages: clang and its runtimes
# (ASan, UBSan, TSan, libFuzzer).
SANITIZER_PACKAGES=(
    clang-14
    libclang-rt-14-dev
)

# The tests whose code runs threads of its own, run under TSan: the runtime's thread pool and
# GEMM (std::thread code), and the GUI workers (QThread, QtConcurrent, queued calls). Qt itself
# is not built with TSan: our own objects that cross threads through it are handed over with
# core/support/thread_handoff.h, and Qt's template copies of them (slot objects, tasks, future results,
# queued arguments) are listed in tests/sanitizers/tsan.supp. `sanitize` (CI's run) runs them
# all.
TSAN_TESTS=(
    thread_pool
    runtime
    gemm
    document
    fusion_explorer
    graph_view
    execution_panel
    pass_stepper
    text_views
    estimator
    kernel_table
    layer_graph
    xla_comparison
    main_window
)


INVOCATION_DIR="$PWD"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JOBS="${HLOSCOPE_JOBS:-2}"
BUILD_DIR="$ROOT/build"   # the default preset's binaryDir
CLI="$BUILD_DIR/app/hloscope-cli"
GUI="$BUILD_DIR/app/hloscope"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,11s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
}

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# deps [PACKAGE...]: installs the missing ones (default: the build packages).
deps() {
    local wanted=("$@")
    [[ ${#wanted[@]} -gt 0 ]] || wanted=("${PACKAGES[@]}")
    if ! command -v dpkg-query >/dev/null 2>&1; then
        log "dpkg-query not found (not Debian?); skipping package installation."
        log "Make sure these (or equivalents) are installed: ${wanted[*]}"
        return 0
    fi

    local missing=() pkg
    for pkg in "${wanted[@]}"; do
        is_installed "$pkg" || missing+=("$pkg")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        log "All required packages are installed."
        return 0
    fi

    local sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 \
            || die "missing packages (${missing[*]}) and not root; sudo is not available"
        sudo=(sudo)
    fi

    log "Installing missing packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get -o DPkg::Lock::Timeout=600 update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
}

configure() {
    # A build/ tree made by hand with another generator would make the preset fail.
    local cache="$BUILD_DIR/CMakeCache.txt"
    if [[ -f "$cache" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
        log "build/ was configured with a different generator; resetting its CMake cache."
        rm -rf "$cache" "$BUILD_DIR/CMakeFiles"
    fi
    log "Configuring (preset: default)"
    cmake --preset default
}

build() {
    deps
    configure
    log "Building (preset: default, -j$JOBS)"
    cmake --build --preset default -j "$JOBS"
}

run_tests() {
    if [[ "${CI:-}" != "true" ]]; then
        deps "${TEST_PACKAGES[@]}"
        build
        log "Running tests"
        ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
    fi
    if [[ "${CI:-}" == "true" ]]; then
        asan_run
        package_run
    elif [[ "${HLOSCOPE_SANITIZE_TESTS:-}" == "1" ]]; then
        sanitize
    fi
}

# test_targets NAME...: tst_NAME for each; test_regex NAME...: a ctest -R matching exactly
# those names (or patterns).
test_targets() { local t; for t in "$@"; do printf 'tst_%s\n' "$t"; done; }
test_regex() { printf '^(%s)$' "$(IFS='|'; echo "$*")"; }

# tsan_run NAME...: configures build-tsan, builds tst_NAME for each, runs them under TSan.
tsan_run() {
    log "Sanitizers: configuring and building build-tsan (clang, TSan): $*"
    cmake --preset tsan
    local targets
    mapfile -t targets < <(test_targets "$@")
    cmake --build --preset tsan -j "$JOBS" --target "${targets[@]}"
    log "Sanitizers: $* under TSan"
    ctest --preset tsan -j "$JOBS" -R "$(test_regex "$@")"
}

# The sanitizer runs.
#   1. build-asan (clang, ASan+UBSan+LSan+libFuzzer): every test but the package test (a
#      package is made from a release build only: package_run), and the fuzz smoke runs (ctest label fuzz:
#      tests/fuzz/run_fuzz.sh, a minute per target). The three slow corpus sweeps
#      (pipeline_corpus, cpu_corpus, tpu_corpus) take every 8th module there
#      (tests/sanitizer_run.h); the parsers' and the passes' corpus sweeps take every module.
#   2. build-tsan: TSAN_TESTS under ThreadSanitizer.
# CI's run (CI=true; 2 cores, 90 minutes) is the first, then package_run: the whole suite once,
# under ASan and UBSan, and the package test on the release programs. A second full build for TSan does not fit beside it on a slower 2-core machine; the
# TSan half runs with `setup.sh sanitize` (docs/reliability.md records its last results).
# The release build with GCC (`test` without CI=true) runs the same tests, the sweeps in full.
asan_run() {
    deps "${PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${SANITIZER_PACKAGES[@]}"
    log "Sanitizers: configuring and building build-asan (clang, ASan+UBSan+libFuzzer)"
    cmake --preset asan
    cmake --build --preset asan -j "$JOBS"
    log "Sanitizers: every test and the fuzz smoke runs under ASan+UBSan"
    ctest --preset asan -j "$JOBS"
}

# The package test on what a user installs: the release build's programs (preset `package`:
# the default build's flags without debug information, which the package strips anyway; no
# tests), made into a .deb with cpack, linted and run (packaging/test_package.sh).
package_run() {
    deps "${PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    log "Package: configuring and building build-package (the release programs, no tests)"
    cmake --preset package
    cmake --build --preset package -j "$JOBS"
    log "Package: the package test on the release build"
    ctest --preset package
}

sanitize() {
    asan_run
    log "Sanitizers: the threaded tests under TSan"
    tsan_run "${TSAN_TESTS[@]}"
}

# Resolve EXAMPLE (a name such as "mlp", a file name such as "mlp.hlo", or a path)
# to an existing file; prints the path.
resolve_example() {
    local arg="${1:-mlp}" candidate candidates
    if [[ "$arg" == /* ]]; then
        candidates=("$arg")
    else
        candidates=(
            "$INVOCATION_DIR/$arg"
            "$ROOT/$arg"
            "$ROOT/resources/examples/$arg"
            "$ROOT/resources/examples/$arg.hlo"
        )
    fi
    for candidate in "${candidates[@]}"; do
        if [[ -f "$candidate" ]]; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    {
        printf 'setup.sh: error: example not found: %s\n' "$arg"
        printf 'Bundled examples:\n'
        local f
        for f in "$ROOT"/resources/examples/*.hlo; do
            [[ -e "$f" ]] && printf '  %s\n' "$(basename "$f" .hlo)"
        done
    } >&2
    return 1
}

package() {
    build
    log "Packaging (cpack -G DEB)"
    (cd "$BUILD_DIR" && cpack -G DEB)
    ls "$BUILD_DIR"/hloscope_*.deb
}

run_example() {
    local example
    # Resolve before building so a typo fails fast.
    example="$(resolve_example "${1:-}")" || exit 1
    build
    [[ -x "$GUI" ]] || die "$GUI was not built"

    # A bundled example opens by name (embedded in the executable); anything
    # else by path.
    local name
    name="$(basename "$example" .hlo)"
    if [[ "$example" == "$ROOT/resources/examples/$name.hlo" ]]; then
        log "hloscope --example $name"
        exec "$GUI" --example "$name"
    fi
    log "hloscope $example"
    exec "$GUI" "$example"
}

main() {
    local cmd="${1:-}"
    [[ $# -gt 0 ]] && shift
    case "$cmd" in
        deps)  deps "${PACKAGES[@]}" "${TEST_PACKAGES[@]}" ;;
        package) package ;;
        build) build ;;
        test)  run_tests ;;
        sanitize) sanitize ;;
        run)   run_example "${1:-}" ;;
        -h|--help|help) usage ;;
        *)     usage; exit 2 ;;
    esac
}

main "$@"
