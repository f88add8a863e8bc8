// The links a route crosses and its bottleneck (route_links.hpp).
#include "route_links.hpp"

#include <algorithm>

namespace rig::pci {
namespace {

using config::PortType;
using sysfs::Node;
using sysfs::Way;

bool below_a_link(PortType t) {
    return t == PortType::Endpoint || t == PortType::LegacyEndpoint || t == PortType::UpstreamPort ||
           t == PortType::PcieToPciBridge;
}

bool above_a_link(PortType t) { return t == PortType::RootPort || t == PortType::DownstreamPort; }

// Whether nodes[i] and nodes[i + 1] of a way are joined by a link.
bool joined(const Way& way, std::size_t i) {
    const Node& below = way.nodes[i];
    const Node& above = way.nodes[i + 1];
    if (below.header.port_type && above.header.port_type)
        return below_a_link(*below.header.port_type) && above_a_link(*above.header.port_type);
    if (below.header.capabilities_read && above.header.capabilities_read) return false;  // conventional PCI
    return i % 2 == 0;
}

RouteLink link_above(const Way& way, std::size_t i) {
    const Node& below = way.nodes[i];
    const Node& port = way.nodes[i + 1];
    RouteLink l;
    l.function = below.link_owner;
    l.port = port.bus;
    l.status = below.link.status ? below.link.status : port.link.status;
    l.capability = below.link.capability;
    l.port_capability = port.link.capability;
    return l;
}

// The links above nodes[0 .. top) of a way, nearest the function first.
std::vector<RouteLink> links_up(const Way& way, std::optional<std::size_t> top) {
    const std::size_t end = top ? *top : way.nodes.size() - 1;
    std::vector<RouteLink> out;
    for (std::size_t i = 0; i < end && i + 1 < way.nodes.size(); ++i)
        if (joined(way, i)) out.push_back(link_above(way, i));
    return out;
}

}  // namespace

void add_links(Route& r, const Way& provider, std::optional<std::size_t> provider_top, const Way& client,
               std::optional<std::size_t> client_top) {
    r.links = links_up(provider, provider_top);
    auto down = links_up(client, client_top);
    r.links.insert(r.links.end(), std::make_move_iterator(down.rbegin()), std::make_move_iterator(down.rend()));
    r.bottleneck.reset();
    for (const RouteLink& l : r.links) {
        if (!l.status) {
            r.bottleneck.reset();
            return;
        }
        if (!r.bottleneck || bytes_per_second(*l.status) < bytes_per_second(*r.bottleneck)) r.bottleneck = l.status;
    }
}

std::optional<std::uint64_t> Route::bottleneck_bytes_per_second() const {
    if (!bottleneck) return std::nullopt;
    return bytes_per_second(*bottleneck);
}

std::vector<RouteLink> Route::downtrained() const {
    std::vector<RouteLink> out;
    std::copy_if(links.begin(), links.end(), std::back_inserter(out),
                 [](const RouteLink& l) { return l.downtrained(); });
    return out;
}

}  // namespace rig::pci
