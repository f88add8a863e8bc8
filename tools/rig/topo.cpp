// rig topo: the endpoints' distance matrix and peer-to-peer matrix, as nvidia-smi topo -m
// lays them out, and --why, which explains one pair.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.hpp"
#include "rig/pci/groups.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/snapshot.hpp"

namespace rig::tool {
namespace {

std::string label_prefix(pci::Kind kind) {
    switch (kind) {
    case pci::Kind::Gpu: return "GPU";
    case pci::Kind::Nic: return "NIC";
    case pci::Kind::Nvme: return "NVME";
    case pci::Kind::Storage: return "STOR";
    case pci::Kind::Accelerator: return "ACC";
    default: return "DEV";
    }
}

std::string distance_token(const std::optional<pci::Distance>& d) {
    if (!d) return "-";
    switch (*d) {
    case pci::Distance::Switch: return "SW";
    case pci::Distance::Bridge: return "BR";
    case pci::Distance::System: return "SYS";
    }
    return "-";
}

std::string forwards_token(const pci::Route& r) {
    if (r.verdict == pci::Verdict::Unread) return "-";
    return r.forwards() ? "OK" : "NS";
}

void matrix(std::ostream& out, const std::vector<std::string>& labels,
            const std::vector<std::vector<pci::Route>>& routes, std::string (*cell)(const pci::Route&)) {
    std::size_t width = 4;
    for (const auto& l : labels) width = std::max(width, l.size() + 2);
    out << fmt::format("{:<{}}", "", width);
    for (const auto& l : labels) out << fmt::format("{:<{}}", l, width);
    out << '\n';
    for (std::size_t i = 0; i < labels.size(); ++i) {
        out << fmt::format("{:<{}}", labels[i], width);
        for (std::size_t j = 0; j < labels.size(); ++j) out << fmt::format("{:<{}}", i == j ? "X" : cell(routes[i][j]), width);
        out << '\n';
    }
}

}  // namespace

int topo(const pci::Machine& machine, bool json, std::ostream& out, std::ostream& err) {
    const auto functions = pci::describe(machine);
    if (!functions) {
        err << "rig: " << functions.error() << '\n';
        return 1;
    }
    std::vector<pci::FunctionFiles> endpoints;
    for (const auto& f : *functions)
        if (pci::kind_of(f.id) != pci::Kind::Bridge) endpoints.push_back(f);

    // routes[p][c]: the client c's requests to a BAR of the provider p.
    std::vector<std::vector<pci::Route>> routes(endpoints.size(), std::vector<pci::Route>(endpoints.size()));
    for (std::size_t p = 0; p < endpoints.size(); ++p)
        for (std::size_t c = 0; c < endpoints.size(); ++c)
            if (p != c) routes[p][c] = machine.route(endpoints[p].id.bus, endpoints[c].id.bus);

    if (json) {
        auto list = nlohmann::json::array();
        for (const auto& f : endpoints)
            list.push_back({{"bus", f.id.bus},
                            {"vendor", fmt::format("0x{:04x}", f.id.vendor)},
                            {"device", fmt::format("0x{:04x}", f.id.device)},
                            {"class", fmt::format("0x{:06x}", f.id.class_code)}});
        auto pairs = nlohmann::json::array();
        for (std::size_t p = 0; p < endpoints.size(); ++p)
            for (std::size_t c = 0; c < endpoints.size(); ++c) {
                if (p == c) continue;
                const auto& r = routes[p][c];
                pairs.push_back({{"provider", r.provider},
                                 {"client", r.client},
                                 {"distance", r.distance ? nlohmann::json(pci::to_string(*r.distance)) : nlohmann::json()},
                                 {"forwards", r.forwards()}});
            }
        out << nlohmann::json{{"functions", list}, {"pairs", pairs}}.dump(2) << '\n';
        return 0;
    }

    std::map<std::string, int> counts;
    std::vector<std::string> labels;
    for (const auto& f : endpoints) {
        const std::string prefix = label_prefix(pci::kind_of(f.id));
        labels.push_back(prefix + std::to_string(counts[prefix]++));
    }
    out << "Endpoints:\n";
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        const auto& f = endpoints[i];
        out << fmt::format("  {:<7} {}  {:04x}:{:04x}  {:<28} NUMA {:>2}  {}\n", labels[i], f.id.bus, f.id.vendor,
                           f.id.device, pci::class_name(f.id.class_code),
                           f.numa_node ? std::to_string(*f.numa_node) : "-", f.host_bridge);
    }
    out << "\nDistance:\n";
    matrix(out, labels, routes, [](const pci::Route& r) { return distance_token(r.distance); });
    out << "\nPeer-to-peer (row: the provider's BAR; column: the client whose requests reach it):\n";
    matrix(out, labels, routes, forwards_token);
    out << "\nLegend:\n"
           "  X    = self\n"
           "  SW   = below a bridge both ways up pass (a switch port or a root port)\n"
           "  BR   = below one host bridge, no common bridge\n"
           "  SYS  = below two host bridges\n"
           "  OK   = Linux p2pdma lets the client's requests reach the provider's BAR\n"
           "  NS   = not supported by Linux p2pdma: rig topo --why PROVIDER CLIENT says why\n"
           "  -    = unread: a file on the way up cannot be read\n";
    const bool all_on_root_buses =
        !endpoints.empty() && std::all_of(endpoints.begin(), endpoints.end(), [](const pci::FunctionFiles& f) {
            return !f.host_bridge.empty() && !f.upstream;
        });
    if (all_on_root_buses && endpoints.size() > 1)
        out << "\nNote: every endpoint sits directly on a root bus, as in a virtual machine, whose topology is the\n"
               "hypervisor's and not the host's (a virtual topology): for the host's routes, run rig snapshot on the\n"
               "host and pass it with --root.\n";
    return 0;
}

int why(const pci::Machine& machine, std::string_view provider, std::string_view client, std::ostream& out,
        std::ostream& err) {
    const auto functions = machine.functions();
    if (!functions) {
        err << "rig: " << functions.error() << '\n';
        return 1;
    }
    for (const std::string_view bus : {provider, client})
        if (std::none_of(functions->begin(), functions->end(), [&](const pci::Id& f) { return f.bus == bus; })) {
            err << "rig: " << bus << ": no such function (rig ls lists them)\n";
            return 1;
        }
    const pci::Route route = machine.route(provider, client);
    out << route.explain();
    // Behind an IOMMU (the client has an IOMMU group) a direct route asks for the
    // provider's function free of its vendor driver too (rig/pci/groups.hpp).
    const auto group = pci::iommu_group(machine, client);
    if (const std::string note = pci::direct_behind_iommu(machine, route, group && *group); !note.empty())
        out << "VFIO: " << note << '\n';
    return 0;
}

}  // namespace rig::tool
