// libFuzzer target: the HLO text parser (core/hlo_parser). A module that parses
// and verifies must print, parse back and print the same (checkRoundTrip).
#include "core/text/hlo_parser.h"
#include "core/verifier/hlo_verifier.h"
#include "core/io/module_io.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    auto modules = parseHloModules(fuzz::asText(data, size));
    if (!modules.isOk()) return 0;
    for (const auto& module : *modules) {
        if (!verifyModule(*module).isOk()) continue;
        Status roundTrip = checkRoundTrip(*module, "fuzz.hlo");
        if (!roundTrip.isOk()) fuzz::fail("HLO text round trip", roundTrip.toString());
    }
    return 0;
}
