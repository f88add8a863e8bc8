// The commands of the rig command line. Each prints to `out` and returns the process's
// exit status: 0 done, 1 the machine could not be read or has no function named (the
// reason on `err`). main.cpp checks the command line (status 2) and --root first.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/machine.hpp"
#include "rig/pci/nics.hpp"

namespace rig::tool {

// rig ls: every function with its ids, class, driver, NUMA node, IOMMU group and link
// ("Gen4 x16", "Gen3 x8 (can Gen4 x16)").
int ls(const pci::Machine& machine, bool json, std::ostream& out, std::ostream& err);

// rig topo: the endpoints (functions that are not bridges) with their links, and the
// distance and peer-to-peer matrices of the GPUs and NICs (of every endpoint with `all`),
// with a legend, as nvidia-smi topo -m prints them; with json, every pair of endpoints.
// Below them, each GPU with its NICs in order of preference, the NIC paired with it and
// why, and a warning for every downtrained link on a GPU-NIC route (nics.hpp); `overrides`
// pin GPUs to NICs. Each function's way is read once (Routes). 1 where an override names
// no function of the machine or a function that is no NIC.
int topo(const pci::Machine& machine, bool json, bool all, const std::vector<pci::Override>& overrides,
         std::ostream& out, std::ostream& err);

// rig topo --why PROVIDER CLIENT: Route::explain for the pair, its links and bottleneck
// included; with json, one object: verdict, distance, common node, links, bottleneck and
// the explanation. 1 where either is no function of the machine.
int why(const pci::Machine& machine, std::string_view provider, std::string_view client, bool json, std::ostream& out,
        std::ostream& err);

}  // namespace rig::tool
