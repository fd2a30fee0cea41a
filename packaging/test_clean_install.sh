#!/usr/bin/env bash
# The clean-machine install test: the release .deb installed into a fresh Debian 12 root.
#
#   packaging/test_clean_install.sh [--deb FILE] [--mirror URL] [--keep DIR]
#
# Makes a minimal Debian 12 (bookworm) root with mmdebstrap (variant "apt": essential packages
# and apt, nothing of Qt, LLVM, Graphviz or jemalloc), copies the .deb in and runs
# `apt-get install ./hloscope_*.deb` there, so that apt has to pull in every library the package
# needs from its Depends alone. Then, inside the root:
#   * `hloscope-cli --version` and `hloscope --version` (no display);
#   * `hloscope-cli run` of the installed mlp example on the CPU (LLVM JIT), checked against the
#     interpreter (`--check`);
#   * `hloscope --example layernorm --screenshot` under QT_QPA_PLATFORM=offscreen, and the PNG is
#     1400x900 and not blank.
# Default .deb: the newest build/hloscope_*.deb (`packaging/setup.sh package` makes it from the
# release build). Needs mmdebstrap (apt install mmdebstrap), network access to the Debian mirror,
# and root or unprivileged user namespaces. Exits 0 when every check passed, 1 when one failed,
# 2 on bad use, 77 when mmdebstrap is missing. packaging/README.md records the last run.
set -uo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
DEB=""
MIRROR="http://deb.debian.org/debian"
KEEP=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --deb) DEB="${2:-}"; shift 2 ;;
        --mirror) MIRROR="${2:-}"; shift 2 ;;
        --keep) KEEP="${2:-}"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "test_clean_install.sh: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
    esac
done
if [[ -z "$DEB" ]]; then
    DEB="$(ls -t "$ROOT_DIR"/build/hloscope_*.deb 2>/dev/null | head -1)"
    [[ -n "$DEB" ]] || { echo "test_clean_install.sh: no build/hloscope_*.deb; run packaging/setup.sh package or pass --deb FILE" >&2; exit 2; }
fi
[[ -f "$DEB" ]] || { echo "test_clean_install.sh: $DEB: no such file" >&2; exit 2; }
command -v mmdebstrap >/dev/null 2>&1 || { echo "test_clean_install.sh: mmdebstrap is not installed (apt install mmdebstrap); skipped" >&2; exit 77; }

DEB="$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")"
DEB_NAME="$(basename "$DEB")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
LOG="$WORK/checks.log"

# The checks run inside the root (a customize hook: /proc, /dev and the network are there).
cat > "$WORK/checks.sh" <<'EOF'
#!/bin/sh
set -u
failures=0
check() {  # check NAME COMMAND...
    name="$1"; shift
    if out="$("$@" 2>&1)"; then
        printf 'ok:   %s\n' "$name"
    else
        printf 'FAIL: %s\n%s\n' "$name" "$out"
        failures=$((failures + 1))
    fi
}
check "hloscope-cli --version" hloscope-cli --version
check "hloscope --version without a display" env -u DISPLAY -u QT_QPA_PLATFORM hloscope --version
check "hloscope-cli run mlp.hlo --device cpu --check" \
    hloscope-cli run /usr/share/hloscope/examples/mlp.hlo --device cpu --repeat 1 --warmup 0 --check
check "hloscope --example layernorm --screenshot (offscreen)" \
    env QT_QPA_PLATFORM=offscreen HOME=/tmp/home XDG_RUNTIME_DIR=/tmp/run \
    hloscope --example layernorm --screenshot /tmp/shot.png
# The PNG header: 1400 x 900 (big-endian width and height at bytes 16-23), and not blank.
check "the screenshot is a 1400x900 PNG" sh -c \
    'test "$(od -An -tx1 -j16 -N8 /tmp/shot.png | tr -d " \n")" = "0000057800000384"'
check "the screenshot is not blank (over 20 KB)" sh -c 'test "$(stat -c %s /tmp/shot.png)" -gt 20000'
exit "$failures"
EOF
chmod +x "$WORK/checks.sh"

printf '== a fresh Debian 12 root from %s, then apt-get install ./%s\n' "$MIRROR" "$DEB_NAME"
TARGET="/dev/null"
[[ -n "$KEEP" ]] && TARGET="$KEEP"
start=$(date +%s)
mmdebstrap --variant=apt --format="$([[ -n "$KEEP" ]] && echo directory || echo null)" \
    --aptopt='APT::Install-Recommends "false"' \
    --customize-hook="copy-in $DEB /tmp" \
    --customize-hook="copy-in $WORK/checks.sh /tmp" \
    --customize-hook='mkdir -p "$1/tmp/home" "$1/tmp/run" && chmod 700 "$1/tmp/run"' \
    --customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y /tmp/$DEB_NAME" \
    --customize-hook='chroot "$1" dpkg-query -W hloscope; echo "packages in the root: $(chroot "$1" dpkg-query -W | wc -l)"' \
    --customize-hook="chroot \"\$1\" /tmp/checks.sh" \
    bookworm "$TARGET" "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))
if [[ $status -eq 0 ]]; then
    printf '\nclean install: every check passed (%d s)\n' "$elapsed"
    exit 0
fi
printf '\nclean install: FAILED (mmdebstrap or a check exited %d after %d s)\n' "$status" "$elapsed"
exit 1
