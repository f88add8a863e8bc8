// The links' ceiling on each path (ceiling.hpp).
#include "ceiling.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace p2p_copy {

Ceiling ceiling(Path path, const std::vector<const Side*>& sides) {
    Ceiling c;
    std::optional<double> lowest;
    for (const Side* side : sides) {
        const rig::pci::Route r =
            path == Path::P2p ? side->route() : side->machine().host_bridge_route(side->gpu_bus(), side->nic_bus());
        if (r.links.empty()) continue;  // functions on a root bus: no link to bound them
        if (!r.bottleneck) {
            c.why = side->name() + ": a link's status is unread, so the ceiling is unknown";
            c.bytes_per_second.reset();
            return c;
        }
        const double bytes = static_cast<double>(rig::pci::bytes_per_second(*r.bottleneck));
        const auto slowest = std::find_if(r.links.begin(), r.links.end(),
                                          [&](const rig::pci::RouteLink& l) { return l.status == r.bottleneck; });
        if (!lowest || bytes < *lowest) {
            lowest = bytes;
            c.why = fmt::format("{}: {} {} - {}, {}", side->name(), rig::pci::to_string(*r.bottleneck),
                                slowest->function, slowest->port, throughput(bytes));
        }
    }
    c.bytes_per_second = lowest;
    if (!lowest && c.why.empty()) c.why = "no PCI Express link on the way";
    return c;
}

void judge(Outcome& o, const Ceiling& c) {
    o.ceiling_bytes_per_second = c.bytes_per_second;
    o.ceiling = c.why;
    if (!o.ran || !c.bytes_per_second || o.bytes_per_second() <= *c.bytes_per_second) return;
    o.impossible = true;
    o.verified = false;
    o.reason += fmt::format("; impossible: {} is above the ceiling of {} ({})", throughput(o.bytes_per_second()),
                            throughput(*c.bytes_per_second), c.why);
}

}  // namespace p2p_copy
