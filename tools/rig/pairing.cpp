// rig topo's NIC lines (pairing.hpp).
#include "pairing.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rig::tool {
namespace {

std::string label_of(const std::map<std::string, std::string>& labels, const std::string& bus) {
    const auto it = labels.find(bus);
    return it == labels.end() ? bus : it->second;
}

std::string state(const std::optional<pci::LinkState>& s) { return s ? pci::to_string(*s) : std::string("unknown"); }

}  // namespace

void print_pairing(std::ostream& out, const std::vector<pci::Pairing>& pairs,
                   const std::map<std::string, std::string>& labels) {
    if (pairs.empty()) return;
    out << "\nNICs for each GPU, best first (rig topo --pair GPU=NIC overrides):\n";
    // Each downtrained link once, with the GPUs whose NIC routes cross it.
    std::map<std::pair<std::string, std::string>, std::pair<pci::RouteLink, std::vector<std::string>>> downtrained;
    for (const pci::Pairing& p : pairs) {
        const std::string gpu = label_of(labels, p.gpu);
        if (!p.nic) {
            out << fmt::format("  {} {} -> none ({})\n", gpu, p.gpu, p.why);
            continue;
        }
        const auto paired =
            std::find_if(p.ranked.begin(), p.ranked.end(), [&](const pci::RankedNic& n) { return n.nic == *p.nic; });
        std::string line = fmt::format("  {} {} -> {} {}", gpu, p.gpu, label_of(labels, *p.nic), *p.nic);
        if (paired != p.ranked.end()) line += " (" + paired->why + ")";
        if (p.why != "its first") line += "; " + p.why;
        const auto next =
            std::find_if(p.ranked.begin(), p.ranked.end(), [&](const pci::RankedNic& n) { return n.nic != *p.nic; });
        if (next != p.ranked.end())
            line += fmt::format("; next {} ({}{})", label_of(labels, next->nic),
                                next->distance ? pci::to_string(*next->distance) : "unread",
                                next->tie && paired != p.ranked.end() && paired->tie ? ", tied" : "");
        out << line << '\n';
        for (const pci::RankedNic& n : p.ranked)
            for (const pci::RouteLink& l : n.downtrained) {
                auto& entry = downtrained[{l.function, l.port}];
                entry.first = l;
                if (std::find(entry.second.begin(), entry.second.end(), gpu) == entry.second.end())
                    entry.second.push_back(gpu);
            }
    }
    for (const auto& [where, entry] : downtrained) {
        const auto& [l, gpus] = entry;
        std::string who;
        for (const auto& g : gpus) who += (who.empty() ? "" : ", ") + g;
        out << fmt::format("  warning: the link of {} below {} is downtrained: LnkSta {}, LnkCap {}{} (routes of {})\n",
                           l.function, l.port, state(l.status), state(l.capability),
                           l.port_capability ? ", port LnkCap " + pci::to_string(*l.port_capability) : std::string(),
                           who);
    }
}

}  // namespace rig::tool
