// The PCI Express links a route crosses (internal to rig_pci; Route::links, link.hpp).
//
// Which neighbours on a way are joined by a link: the link above a node joins it, an
// endpoint, legacy endpoint, switch upstream port or PCI Express-to-PCI bridge (PCIe
// Base 6.0 §7.5.3.2, Device/Port Type), to the root port or switch downstream port above
// it. A switch's upstream port and its downstream ports are bridges inside one device,
// joined by the switch's own fabric, not by a link. Where a port type is unknown (a
// reader without CAP_SYS_ADMIN gets 64 bytes of configuration space), the way's shape
// decides: a way alternates function, port, upstream port, port, ..., so node i is joined
// to node i + 1 for even i.
#pragma once

#include <cstddef>

#include "rig/pci/machine.hpp"
#include "sysfs.hpp"

namespace rig::pci {

// Sets r.links and r.bottleneck: the provider's links up to its node `provider_top`
// (the common node; nullopt: all of its way), then the client's links from `client_top`
// down.
void add_links(Route& r, const sysfs::Way& provider, std::optional<std::size_t> provider_top, const sysfs::Way& client,
               std::optional<std::size_t> client_top);

}  // namespace rig::pci
