// fuzz_seeds DIR N: writes N random well-formed HLO modules (tests/random_hlo,
// seeds 1..N) to DIR/random_K.hlo, so the fuzz runs have varied seeds where
// ../shared/corpus is absent (CI's clean clone).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/random_hlo.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_seeds DIR N\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int count = std::atoi(argv[2]);
    hloscope::testing::RandomHloOptions options;
    options.maxElements = 4096;  // small modules: fast pipeline runs while fuzzing
    for (int seed = 1; seed <= count; ++seed) {
        const std::string path = dir + "/random_" + std::to_string(seed) + ".hlo";
        std::ofstream out(path, std::ios::binary);
        out << hloscope::testing::generateRandomHlo(static_cast<uint64_t>(seed), options).text;
        if (!out) {
            std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
            return 1;
        }
    }
    return 0;
}
