// The data caches of the CPU this process runs on, as one core sees them:
// Linux's sysfs cache description of cpu0 (per instance, so an L3 shared by
// a core complex counts once, not summed over the package as
// sysconf(_SC_LEVEL3_CACHE_SIZE) reports on some machines), falling back to
// sysconf, then 0 (unknown).
#pragma once

#include <cstdint>
#include <string>

namespace hloscope {

struct HostCaches {
    int64_t l1dBytes = 0;
    int64_t l2Bytes = 0;
    int64_t l3Bytes = 0;
    std::string source;  // "sysfs", "sysconf" or "unknown"
    // The last level present (L3, else L2, else L1d); 0 when unknown.
    int64_t lastLevelBytes() const { return l3Bytes > 0 ? l3Bytes : l2Bytes > 0 ? l2Bytes : l1dBytes; }
};

HostCaches hostCaches();

}  // namespace hloscope
