// Seeds for the fuzz runs (tests/fuzz/run_fuzz.sh):
//   fuzz_seeds DIR N             writes N random well-formed HLO modules (tests/random_hlo,
//                                seeds 1..N) to DIR/random_K.hlo, so the runs have varied seeds
//                                where ../shared/corpus is absent (CI's clean clone);
//   fuzz_seeds --to-json IN OUT  writes module IN (HLO text) as hloscope JSON to OUT (the JSON
//                                target's seeds).
//   fuzz_seeds --to-json-dir OUTDIR IN...  the same for many files, written to OUTDIR/K.json
//                                (K: the file's place in the list); prints how many.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/hlo_json.h"
#include "core/module_io.h"
#include "tests/random_hlo.h"

namespace {

bool writeFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "--to-json") {
        auto module = hloscope::loadModuleFromFile(argv[2]);
        if (!module.isOk()) {
            std::fprintf(stderr, "%s\n", module.status().toString().c_str());
            return 1;
        }
        return writeFile(argv[3], hloscope::moduleToJson(**module, -1)) ? 0 : 1;
    }
    if (argc >= 4 && std::string(argv[1]) == "--to-json-dir") {
        // One process for thousands of seeds (one per file took an hour under ASan).
        const std::string dir = argv[2];
        int written = 0;
        for (int i = 3; i < argc; ++i) {
            auto module = hloscope::loadModuleFromFile(argv[i]);
            if (!module.isOk()) continue;  // a seed that does not load is left out
            if (!writeFile(dir + "/" + std::to_string(i - 2) + ".json",
                           hloscope::moduleToJson(**module, -1)))
                return 1;
            ++written;
        }
        std::printf("%d\n", written);
        return 0;
    }
    if (argc != 3) {
        std::fprintf(stderr,
                     "usage: fuzz_seeds DIR N | fuzz_seeds --to-json IN OUT | "
                     "fuzz_seeds --to-json-dir OUTDIR IN...\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int count = std::atoi(argv[2]);
    hloscope::testing::RandomHloOptions options;
    options.maxElements = 4096;  // small modules: fast pipeline runs while fuzzing
    for (int seed = 1; seed <= count; ++seed) {
        const std::string path = dir + "/random_" + std::to_string(seed) + ".hlo";
        if (!writeFile(
                path,
                hloscope::testing::generateRandomHlo(static_cast<uint64_t>(seed), options).text))
            return 1;
    }
    return 0;
}
