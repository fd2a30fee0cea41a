#!/usr/bin/env bash
# Regenerates packaging/screenshots/*.png (the AppStream metainfo's and the README's user guide
# screenshots) with the built GUI, offscreen: hloscope --screenshot renders the 1400x900 window
# once the graph is drawn. Each shot starts from an empty settings folder, so a saved window
# layout or last document cannot change it.
#
#   packaging/make_screenshots.sh [BUILD_DIR]      (default: build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
GUI="$BUILD/app/hloscope"
OUT="$ROOT/packaging/screenshots"
[[ -x "$GUI" ]] || { echo "make_screenshots.sh: $GUI not built" >&2; exit 1; }
mkdir -p "$OUT"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

shot() {
    local name="$1"
    shift
    rm -rf "$SCRATCH/home"
    mkdir -p "$SCRATCH/home"
    HOME="$SCRATCH/home" XDG_CONFIG_HOME="$SCRATCH/home/.config" XDG_CACHE_HOME="$SCRATCH/home/.cache" \
        XDG_DATA_HOME="$SCRATCH/home/.local/share" XDG_RUNTIME_DIR="$SCRATCH" QT_QPA_PLATFORM=offscreen \
        "$GUI" "$@" --screenshot "$OUT/$name.png" >/dev/null
    echo "$OUT/$name.png"
}

# Open a model: the layer norm example on the H100 pipeline, as parsed.
shot open --example layernorm --target h100
# Step through passes: after the fusion pass (step 10), its diff.
shot passes --example layernorm --target h100 --step 10 --panel Diff
# Read fusion decisions: the Fusion panel after the fusion pass.
shot fusion --example layernorm --target h100 --step 10 --panel Fusion
# Run and compare: the MLP before/after fusion, run unfused and fused (heat map, checks).
shot run --example mlp --step 10 --compare --run --panel Execution
# Estimate: softmax on H100 after multi-output fusion, the Estimator panel.
shot estimate --example softmax --target h100 --step 11 --panel Estimator
