// libFuzzer target: literal text and literal JSON (core/ir/literal_parse.cc,
// literal_json.cc). A literal that parses must print and parse back to the same
// text, in both forms.
#include <cstdlib>

#include "core/ir/literal.h"
#include "tests/fuzz/fuzz_util.h"

using namespace hloscope;

// Literals up to 1 MiB: "f32[500000000] 3.2" is 21 bytes of text for a 2 GB
// splat, which the 4 GiB limit allows and printing it back takes a minute; the
// limit itself has its own test (tst_input_limits). At 16 MiB, the hour-long run
// spent 15 s of CPU (over libFuzzer's timeout on a loaded machine) printing and
// parsing back a 2.75-million-element bf16 splat: slow under ASan, not a hang
// (regressions/literal/large_bf16_splat_then_open_comment.txt).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("HLOSCOPE_MAX_LITERAL_MB", "1", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fuzz::kMaxInputBytes) return -1;
    std::string_view text = fuzz::asText(data, size);
    if (auto literal = Literal::parse(text); literal.isOk()) {
        std::string printed = literal->toString();
        auto again = Literal::parse(printed);
        if (!again.isOk())
            fuzz::fail("printed literal parses", printed + "\n" + again.status().toString());
        if (again->toString() != printed)
            fuzz::fail("literal text round trip", printed + "\n" + again->toString());
    }
    if (auto literals = literalsFromJson(text, "fuzz.json"); literals.isOk()) {
        for (const Literal& literal : *literals) {
            std::string json = literalToJson(literal);
            auto again = literalFromJson(json, "fuzz-rewritten.json");
            if (!again.isOk())
                fuzz::fail("literal JSON reads back", json + "\n" + again.status().toString());
            if (literalToJson(*again) != json)
                fuzz::fail("literal JSON round trip", json + "\n" + literalToJson(*again));
        }
    }
    return 0;
}
