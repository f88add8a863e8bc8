// The JSON documents of rig ls, rig topo and rig topo --why (rig/pci/json.hpp), moved here
// from tools/rig so that the Python module prints the same ones.
#include "rig/pci/json.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "rig/pci/groups.hpp"
#include "rig/pci/link.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/routes.hpp"
#include "rig/pci/snapshot.hpp"

namespace rig::pci {
namespace {

std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json or_null(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(); }

// {"generation": 4, "gigatransfers": 16.0, "width": 16, "bytes_per_second": N}, or null.
nlohmann::json link_state_json(const std::optional<LinkState>& s) {
    if (!s) return nullptr;
    return {{"generation", static_cast<unsigned>(s->speed)},
            {"gigatransfers", gigatransfers(s->speed)},
            {"width", s->width},
            {"bytes_per_second", bytes_per_second(*s)}};
}

// {"status": state, "capability": state, "source": "config"|"sysfs"|"unread", "text": "Gen4 x16"}.
nlohmann::json link_json(const Link& l) {
    return {{"status", link_state_json(l.status)},
            {"capability", link_state_json(l.capability)},
            {"source", to_string(l.source)},
            {"text", describe(l)}};
}

// The route's links, bottleneck and downtrained links.
nlohmann::json links_json(const Route& r) {
    auto links = nlohmann::json::array();
    for (const RouteLink& l : r.links)
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

// [{"gpu": BUS, "ranked": [{"nic": BUS, "forwards": bool, "distance": "switch"|"bridge"|
// "system", "numa": "same"|"other"|"unknown", "bottleneck_bytes_per_second": N or null,
// "tie": bool}, ...], "paired": BUS or null}, ...]
nlohmann::json nics_json(const std::vector<Pairing>& pairs) {
    auto list = nlohmann::json::array();
    for (const Pairing& p : pairs) {
        auto ranked = nlohmann::json::array();
        for (const RankedNic& n : p.ranked)
            ranked.push_back(
                {{"nic", n.nic},
                 {"forwards", n.forwards},
                 {"distance", n.distance ? nlohmann::json(to_string(*n.distance)) : nlohmann::json()},
                 {"numa", to_string(n.numa)},
                 {"bottleneck_bytes_per_second",
                  n.bottleneck_bytes_per_second ? nlohmann::json(*n.bottleneck_bytes_per_second) : nlohmann::json()},
                 {"tie", n.tie}});
        list.push_back(
            {{"gpu", p.gpu}, {"ranked", ranked}, {"paired", p.nic ? nlohmann::json(*p.nic) : nlohmann::json()}});
    }
    return list;
}

}  // namespace

Result<std::string> ls_json(const Machine& machine) {
    const auto functions = describe(machine);
    if (!functions) return std::unexpected(functions.error());
    auto list = nlohmann::json::array();
    for (const auto& f : *functions)
        list.push_back({
            {"bus", f.id.bus},
            {"vendor", fmt::format("0x{:04x}", f.id.vendor)},
            {"device", fmt::format("0x{:04x}", f.id.device)},
            {"class", fmt::format("0x{:06x}", f.id.class_code)},
            {"class_name", class_name(f.id.class_code)},
            {"kind", to_string(kind_of(f.id))},
            {"driver", or_null(f.driver)},
            {"numa_node", f.numa_node ? nlohmann::json(*f.numa_node) : nlohmann::json()},
            {"iommu_group", or_null(f.iommu_group)},
            {"host_bridge", f.host_bridge.empty() ? nlohmann::json() : nlohmann::json(f.host_bridge)},
            {"upstream", or_null(f.upstream)},
            {"physfn", or_null(f.physfn)},
            {"buses", f.buses ? nlohmann::json::array({f.buses->first, f.buses->second}) : nlohmann::json()},
            {"link", link_json(f.link)},
        });
    return dump(nlohmann::json{{"functions", list}});
}

Result<std::string> topo_json(const Machine& machine, std::span<const Override> overrides) {
    const auto functions = describe(machine);
    if (!functions) return std::unexpected(functions.error());
    const auto routes = Routes::read(machine);
    if (!routes) return std::unexpected(routes.error());
    // endpoints[k]: a function that is no bridge; index[k] its index in routes.
    std::vector<const FunctionFiles*> endpoints;
    std::vector<std::size_t> index;
    for (const auto& f : *functions) {
        if (kind_of(f.id) == Kind::Bridge) continue;
        const auto at = routes->find(f.id.bus);
        if (!at) continue;  // listed by one read and gone by the next
        endpoints.push_back(&f);
        index.push_back(*at);
    }
    const auto pairs_of_nics = pair_nics(*routes, overrides);
    if (!pairs_of_nics) return std::unexpected(pairs_of_nics.error());

    auto list = nlohmann::json::array();
    for (const FunctionFiles* f : endpoints)
        list.push_back({{"bus", f->id.bus},
                        {"vendor", fmt::format("0x{:04x}", f->id.vendor)},
                        {"device", fmt::format("0x{:04x}", f->id.device)},
                        {"class", fmt::format("0x{:06x}", f->id.class_code)},
                        {"link", link_json(f->link)}});
    auto pairs = nlohmann::json::array();
    for (std::size_t p = 0; p < endpoints.size(); ++p)
        for (std::size_t c = 0; c < endpoints.size(); ++c) {
            if (p == c) continue;
            const auto d = routes->distance(index[p], index[c]);
            const auto v = routes->verdict(index[p], index[c]);
            pairs.push_back({{"provider", endpoints[p]->id.bus},
                             {"client", endpoints[c]->id.bus},
                             {"distance", d ? nlohmann::json(to_string(*d)) : nlohmann::json()},
                             {"forwards", v == Verdict::Direct || v == Verdict::ThroughHostBridge}});
        }
    return dump(nlohmann::json{{"functions", list}, {"pairs", pairs}, {"nics", nics_json(*pairs_of_nics)}});
}

std::string why_json(const Machine& machine, std::string_view provider, std::string_view client) {
    const Route r = machine.route(provider, client);
    // Behind an IOMMU (the client has an IOMMU group) a direct route asks for the
    // provider's function free of its vendor driver too (rig/pci/groups.hpp).
    const auto group = iommu_group(machine, client);
    const std::string vfio = direct_behind_iommu(machine, r, group && *group);
    nlohmann::json j = {{"provider", r.provider},
                        {"client", r.client},
                        {"verdict", to_string(r.verdict)},
                        {"forwards", r.forwards()},
                        {"distance", r.distance ? nlohmann::json(to_string(*r.distance)) : nlohmann::json()},
                        {"common", r.common ? nlohmann::json(*r.common) : nlohmann::json()},
                        {"explanation", r.explain()},
                        {"vfio", vfio.empty() ? nlohmann::json() : nlohmann::json(vfio)}};
    j.update(links_json(r));
    return dump(j);
}

}  // namespace rig::pci
