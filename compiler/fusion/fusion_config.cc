#include "compiler/fusion/fusion_config.h"

#include <string_view>

namespace hloscope::fusion {

namespace {

StatusOr<std::set<std::pair<std::string, std::string>>> parsePairs(std::string_view key,
                                                                   const std::string& text) {
    std::set<std::pair<std::string, std::string>> pairs;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) {
            const size_t colon = item.find(':');
            std::string a = colon == std::string::npos ? std::string() : item.substr(0, colon);
            std::string b = colon == std::string::npos ? std::string() : item.substr(colon + 1);
            if (!a.empty() && a[0] == '%') a.erase(0, 1);
            if (!b.empty() && b[0] == '%') b.erase(0, 1);
            if (a.empty() || b.empty() || b.find(':') != std::string::npos)
                return invalidArgument("option " + std::string(key) + ": '" + item +
                                       "' is not producer:consumer");
            pairs.emplace(std::move(a), std::move(b));
        }
        start = end + 1;
    }
    return pairs;
}

}  // namespace

StatusOr<FusionConfig> parseFusionConfig(const PassOptions& options) {
    HLO_RETURN_IF_ERROR(options.checkKnown({"target", "max_operands", "max_fused_instructions", "force",
                                             "forbid", "disable_cost_model", "cost_model", "hardware"}));
    FusionConfig config;
    HLO_ASSIGN_OR_RETURN(config.target, options.getString("target", "cpu"));
    if (config.target == "gpu") {
        config.maxOperands = 96;
        config.onChipBudgetBytes = 228 * 1024;
        config.tileElements = 1024;
    } else if (config.target == "tpu") {
        config.maxOperands = 64;
        config.maxFusedInstructions = 512;
        config.onChipBudgetBytes = 16 << 20;
        config.tileElements = 2048;
    } else if (config.target != "cpu") {
        return invalidArgument("option target: must be cpu, gpu or tpu, not '" + config.target +
                               "'");
    }
    HLO_ASSIGN_OR_RETURN(config.maxOperands, options.getInt("max_operands", config.maxOperands));
    HLO_ASSIGN_OR_RETURN(config.maxFusedInstructions,
                         options.getInt("max_fused_instructions", config.maxFusedInstructions));
    if (config.maxOperands < 1) return invalidArgument("option max_operands: must be at least 1");
    if (config.maxFusedInstructions < 2)
        return invalidArgument("option max_fused_instructions: must be at least 2");
    HLO_ASSIGN_OR_RETURN(config.disableCostModel, options.getBool("disable_cost_model", false));
    HLO_ASSIGN_OR_RETURN(config.costModel, options.getString("cost_model", "performance"));
    if (config.costModel != "performance" && config.costModel != "bytes")
        return invalidArgument("option cost_model: must be performance or bytes, not '" +
                               config.costModel + "'");
    HLO_ASSIGN_OR_RETURN(config.hardware, options.getString("hardware", ""));
    HLO_ASSIGN_OR_RETURN(std::string force, options.getString("force", ""));
    HLO_ASSIGN_OR_RETURN(std::string forbid, options.getString("forbid", ""));
    HLO_ASSIGN_OR_RETURN(config.force, parsePairs("force", force));
    HLO_ASSIGN_OR_RETURN(config.forbid, parsePairs("forbid", forbid));
    return config;
}

}  // namespace hloscope::fusion
