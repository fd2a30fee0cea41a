// libFuzzer target: the StableHLO MLIR reader and its import into HLO
// (core/stablehlo_*). An imported module must verify (unbounded dynamic
// dimensions allowed, as StableHLO has them): the importer builds HLO itself,
// so a module it hands back that does not verify is its bug.
#include "core/hlo_verifier.h"
#include "core/stablehlo_parser.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    auto modules = parseStableHlo(fuzz::asText(data, size), "fuzz.mlir");
    if (!modules.isOk()) return 0;
    for (const auto& module : *modules) {
        HloVerifierOptions options;
        options.allowUnboundedDynamism = true;
        Status verified = verifyModule(*module, options);
        if (!verified.isOk()) fuzz::fail("imported StableHLO module verifies", verified.toString());
    }
    return 0;
}
