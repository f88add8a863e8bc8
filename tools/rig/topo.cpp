// rig topo: the endpoints' distance matrix and peer-to-peer matrix, as nvidia-smi topo -m
// lays them out, and --why, which explains one pair.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "commands.hpp"
#include "pairing.hpp"
#include "rig/pci/json.hpp"
#include "rig/pci/groups.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/routes.hpp"
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

// One row per shown endpoint, one column per shown endpoint; cell(i, j) of their indices.
template <class Cell>
void matrix(std::ostream& out, const std::vector<std::string>& labels, const std::vector<std::size_t>& shown,
            Cell cell) {
    std::size_t width = 4;
    for (const std::size_t i : shown) width = std::max(width, labels[i].size() + 2);
    out << fmt::format("{:<{}}", "", width);
    for (const std::size_t i : shown) out << fmt::format("{:<{}}", labels[i], width);
    out << '\n';
    for (const std::size_t i : shown) {
        out << fmt::format("{:<{}}", labels[i], width);
        for (const std::size_t j : shown) out << fmt::format("{:<{}}", i == j ? std::string("X") : cell(i, j), width);
        out << '\n';
    }
}

std::string forwards_token(pci::Verdict v) {
    if (v == pci::Verdict::Unread) return "-";
    return v == pci::Verdict::Direct || v == pci::Verdict::ThroughHostBridge ? "OK" : "NS";
}

}  // namespace

int topo(const pci::Machine& machine, bool json, bool all, const std::vector<pci::Override>& overrides,
         std::ostream& out, std::ostream& err) {
    if (json) {
        const auto text = pci::topo_json(machine, overrides);
        if (!text) {
            err << "rig: " << text.error() << '\n';
            return 1;
        }
        out << *text << '\n';
        return 0;
    }
    const auto functions = pci::describe(machine);
    if (!functions) {
        err << "rig: " << functions.error() << '\n';
        return 1;
    }
    const auto routes = pci::Routes::read(machine);
    if (!routes) {
        err << "rig: " << routes.error() << '\n';
        return 1;
    }
    // endpoints[k]: a function that is no bridge; index[k] its index in routes.
    std::vector<pci::FunctionFiles> endpoints;
    std::vector<std::size_t> index;
    for (const auto& f : *functions) {
        if (pci::kind_of(f.id) == pci::Kind::Bridge) continue;
        const auto at = routes->find(f.id.bus);
        if (!at) continue;  // listed by one read and gone by the next
        endpoints.push_back(f);
        index.push_back(*at);
    }
    const auto pairs_of_nics = pci::pair_nics(*routes, overrides);
    if (!pairs_of_nics) {
        err << "rig: " << pairs_of_nics.error() << '\n';
        return 1;
    }
    // The client's requests to a BAR of the provider, by endpoint positions.
    const auto verdict = [&](std::size_t p, std::size_t c) { return routes->verdict(index[p], index[c]); };
    const auto distance = [&](std::size_t a, std::size_t b) { return routes->distance(index[a], index[b]); };

    std::map<std::string, int> counts;
    std::vector<std::string> labels;
    std::vector<std::size_t> shown;  // GPUs and NICs, as nvidia-smi topo -m shows; every endpoint with --all
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        const auto kind = pci::kind_of(endpoints[i].id);
        const std::string prefix = label_prefix(kind);
        labels.push_back(prefix + std::to_string(counts[prefix]++));
        if (all || kind == pci::Kind::Gpu || kind == pci::Kind::Nic) shown.push_back(i);
    }
    out << "Endpoints:\n";
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
        const auto& f = endpoints[i];
        out << fmt::format("  {:<7} {}  {:04x}:{:04x}  {:<28} NUMA {:>2}  {:<10}  {}\n", labels[i], f.id.bus,
                           f.id.vendor, f.id.device, pci::class_name(f.id.class_code),
                           f.numa_node ? std::to_string(*f.numa_node) : "-", f.host_bridge,
                           f.link.source == pci::LinkSource::Unread ? "-" : pci::describe(f.link));
    }
    if (shown.size() < endpoints.size())
        out << fmt::format("\nThe matrices show the GPUs and NICs ({} of {} endpoints); --all shows every one.\n",
                           shown.size(), endpoints.size());
    out << "\nDistance:\n";
    matrix(out, labels, shown, [&](std::size_t a, std::size_t b) { return distance_token(distance(a, b)); });
    out << "\nPeer-to-peer (row: the provider's BAR; column: the client whose requests reach it):\n";
    matrix(out, labels, shown, [&](std::size_t p, std::size_t c) { return forwards_token(verdict(p, c)); });
    out << "\nLegend:\n"
           "  X    = self\n"
           "  SW   = below a bridge both ways up pass (a switch port or a root port)\n"
           "  BR   = below one host bridge, no common bridge\n"
           "  SYS  = below two host bridges\n"
           "  OK   = Linux p2pdma lets the client's requests reach the provider's BAR\n"
           "  NS   = not supported by Linux p2pdma: rig topo --why PROVIDER CLIENT says why\n"
           "  -    = unread: a file on the way up cannot be read\n";
    std::map<std::string, std::string> by_bus;
    for (std::size_t i = 0; i < endpoints.size(); ++i) by_bus[endpoints[i].id.bus] = labels[i];
    print_pairing(out, *pairs_of_nics, by_bus);
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

int why(const pci::Machine& machine, std::string_view provider, std::string_view client, bool json, std::ostream& out,
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
    if (json) {
        out << pci::why_json(machine, provider, client) << '\n';
        return 0;
    }
    const pci::Route r = machine.route(provider, client);
    // Behind an IOMMU (the client has an IOMMU group) a direct route asks for the
    // provider's function free of its vendor driver too (rig/pci/groups.hpp).
    const auto group = pci::iommu_group(machine, client);
    out << r.explain();
    if (const std::string vfio = pci::direct_behind_iommu(machine, r, group && *group); !vfio.empty())
        out << "VFIO: " << vfio << '\n';
    return 0;
}

}  // namespace rig::tool
