#include "compiler/runtime/host_caches.h"

#include <unistd.h>

#include <fstream>

namespace hloscope {

namespace {

std::string readLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// "32768K", "2M" or a byte count; 0 when unreadable.
int64_t parseSize(const std::string& text) {
    size_t used = 0;
    int64_t value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (...) {
        return 0;
    }
    if (value <= 0) return 0;
    const char unit = used < text.size() ? text[used] : '\0';
    if (unit == 'K') return value << 10;
    if (unit == 'M') return value << 20;
    if (unit == 'G') return value << 30;
    return value;
}

long sysconfOrZero([[maybe_unused]] int name) {
    const long value = sysconf(name);
    return value > 0 ? value : 0;
}

}  // namespace

HostCaches hostCaches() {
    HostCaches caches;
    for (int index = 0; index < 8; ++index) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        const std::string level = readLine(dir + "level");
        if (level.empty()) continue;
        const std::string type = readLine(dir + "type");
        const int64_t size = parseSize(readLine(dir + "size"));
        if (size <= 0 || type == "Instruction") continue;
        if (level == "1") caches.l1dBytes = size;
        else if (level == "2") caches.l2Bytes = size;
        else if (level == "3") caches.l3Bytes = size;
    }
    if (caches.lastLevelBytes() > 0) {
        caches.source = "sysfs";
        return caches;
    }
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
    caches.l1dBytes = sysconfOrZero(_SC_LEVEL1_DCACHE_SIZE);
    caches.l2Bytes = sysconfOrZero(_SC_LEVEL2_CACHE_SIZE);
    caches.l3Bytes = sysconfOrZero(_SC_LEVEL3_CACHE_SIZE);
#endif
    caches.source = caches.lastLevelBytes() > 0 ? "sysconf" : "unknown";
    return caches;
}

}  // namespace hloscope
