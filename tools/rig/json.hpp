// JSON spellings shared by rig ls and rig topo: a link state, a function's link, a route's
// links and bottleneck (rig/pci/link.hpp, machine.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"

namespace rig::tool {

// {"generation": 4, "gigatransfers": 16.0, "width": 16, "bytes_per_second": N}, or null.
inline nlohmann::json link_state_json(const std::optional<pci::LinkState>& s) {
    if (!s) return nullptr;
    return {{"generation", static_cast<unsigned>(s->speed)},
            {"gigatransfers", pci::gigatransfers(s->speed)},
            {"width", s->width},
            {"bytes_per_second", pci::bytes_per_second(*s)}};
}

// {"status": state, "capability": state, "source": "config"|"sysfs"|"unread", "text": "Gen4 x16"}.
inline nlohmann::json link_json(const pci::Link& l) {
    return {{"status", link_state_json(l.status)},
            {"capability", link_state_json(l.capability)},
            {"source", pci::to_string(l.source)},
            {"text", pci::describe(l)}};
}

// The route's links, bottleneck and downtrained links.
inline nlohmann::json links_json(const pci::Route& r) {
    auto links = nlohmann::json::array();
    for (const pci::RouteLink& l : r.links)
        links.push_back({{"function", l.function},
                         {"port", l.port},
                         {"status", link_state_json(l.status)},
                         {"capability", link_state_json(l.capability)},
                         {"port_capability", link_state_json(l.port_capability)},
                         {"downtrained", l.downtrained()}});
    const auto bytes = r.bottleneck_bytes_per_second();
    return {{"links", links},
            {"bottleneck", link_state_json(r.bottleneck)},
            {"bottleneck_bytes_per_second", bytes ? nlohmann::json(*bytes) : nlohmann::json()}};
}

}  // namespace rig::tool
