// libFuzzer target: hloscope JSON import (core/hlo_json). A module read from
// JSON that verifies must write back to JSON and read again to the same text.
#include "core/json/hlo_json.h"
#include "core/text/hlo_printer.h"
#include "core/verifier/hlo_verifier.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    auto module = moduleFromJson(fuzz::asText(data, size), "fuzz.json");
    if (!module.isOk() || !verifyModule(**module).isOk()) return 0;
    std::string json = moduleToJson(**module);
    auto again = moduleFromJson(json, "fuzz-rewritten.json");
    if (!again.isOk())
        fuzz::fail("JSON written by moduleToJson reads back", again.status().toString());
    if (printModule(**again) != printModule(**module))
        fuzz::fail("JSON round trip keeps the module",
                   printModule(**module) + "\n---\n" + printModule(**again));
    return 0;
}
