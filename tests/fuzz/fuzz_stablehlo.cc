// libFuzzer target: the StableHLO MLIR reader and its import into HLO
// (core/stablehlo_*), then the verifier on what was imported. The importer
// checks what it needs to build HLO and leaves the ops' other rules to the
// verifier, which every consumer runs after loading (the pipeline refuses a
// module that does not verify, naming the instruction): so a module that
// imports but does not verify is an expected outcome here, and the findings
// are crashes, sanitizer reports, leaks, timeouts and memory blow-ups.
#include "core/verifier/hlo_verifier.h"
#include "core/stablehlo/stablehlo_parser.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    auto modules = parseStableHlo(fuzz::asText(data, size), "fuzz.mlir");
    if (!modules.isOk()) return 0;
    HloVerifierOptions options;
    options.allowUnboundedDynamism = true;
    for (const auto& module : *modules) (void)verifyModule(*module, options);
    return 0;
}
