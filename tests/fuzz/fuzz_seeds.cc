// Seeds for the fuzz runs (tests/fuzz/run_fuzz.sh):
//   fuzz_seeds DIR N             writes N random well-formed HLO modules (tests/random_hlo,
//                                seeds 1..N) to DIR/random_K.hlo, so the runs have varied seeds
//                                where ../shared/corpus is absent (CI's clean clone);
//   fuzz_seeds --to-json OUTDIR  reads HLO text paths from standard input, one a line, and
//                                writes each module as hloscope JSON to OUTDIR/K.json (K: its
//                                line; the JSON target's seeds); a file that does not load is
//                                left out. One process for all (one per file took an hour
//                                under ASan).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "core/json/hlo_json.h"
#include "core/io/module_io.h"
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
    if (argc == 3 && std::string(argv[1]) == "--to-json") {
        const std::string dir = argv[2];
        std::string path;
        for (int line = 1; std::getline(std::cin, path); ++line) {
            auto module = hloscope::loadModuleFromFile(path);
            if (module.isOk() && !writeFile(dir + "/" + std::to_string(line) + ".json",
                                            hloscope::moduleToJson(**module, -1)))
                return 1;
        }
        return 0;
    }
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_seeds DIR N | fuzz_seeds --to-json OUTDIR < PATHS\n");
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
