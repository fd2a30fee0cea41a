#include "compiler/pipeline/hlo_pass.h"

#include <charconv>

namespace hloscope {

StatusOr<std::string> PassOptions::getString(std::string_view key, std::string fallback) const {
    auto it = m_values.find(std::string(key));
    return it == m_values.end() ? fallback : it->second;
}

StatusOr<int64_t> PassOptions::getInt(std::string_view key, int64_t fallback) const {
    auto it = m_values.find(std::string(key));
    if (it == m_values.end()) return fallback;
    int64_t value = 0;
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return invalidArgument("option " + std::string(key) + " expects an integer, got '" + text +
                               "'");
    return value;
}

StatusOr<bool> PassOptions::getBool(std::string_view key, bool fallback) const {
    auto it = m_values.find(std::string(key));
    if (it == m_values.end()) return fallback;
    if (it->second == "true" || it->second == "1" || it->second == "on") return true;
    if (it->second == "false" || it->second == "0" || it->second == "off") return false;
    return invalidArgument("option " + std::string(key) + " expects true or false, got '" +
                           it->second + "'");
}

Status PassOptions::checkKnown(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : m_values) {
        bool found = false;
        for (std::string_view k : known) found = found || k == key;
        if (!found) {
            std::string list;
            for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
            return invalidArgument("unknown option '" + key + "'" +
                                   (list.empty() ? " (the pass takes none)"
                                                 : " (known: " + list + ")"));
        }
    }
    return Status::ok();
}

void HloPass::recordRewrite(std::string rule, const HloInstruction* before,
                            const HloInstruction* after) {
    RewriteEvent event;
    event.rule = std::move(rule);
    if (before) {
        event.before = before->name();
        event.beforeId = before->uniqueId();
    }
    if (after) {
        event.after = after->name();
        event.afterId = after->uniqueId();
    }
    m_rewrites.push_back(std::move(event));
}

}  // namespace hloscope
