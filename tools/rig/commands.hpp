// The commands of the rig command line. Each prints to `out` and returns the process's
// exit status: 0 done, 1 the machine could not be read or has no function named (the
// reason on `err`). main.cpp checks the command line (status 2) and --root first.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "rig/pci/machine.hpp"

namespace rig::tool {

// rig ls: every function with its ids, class, driver, NUMA node, IOMMU group and link
// ("Gen4 x16", "Gen3 x8 (can Gen4 x16)").
int ls(const pci::Machine& machine, bool json, std::ostream& out, std::ostream& err);

// rig topo: the endpoints (functions that are not bridges) with their links, and the
// distance and peer-to-peer matrices of the GPUs and NICs (of every endpoint with `all`),
// with a legend, as nvidia-smi topo -m prints them; with json, every pair of endpoints.
// Each function's way is read once (Routes).
int topo(const pci::Machine& machine, bool json, bool all, std::ostream& out, std::ostream& err);

// rig topo --why PROVIDER CLIENT: Route::explain for the pair, its links and bottleneck
// included; with json, one object: verdict, distance, common node, links, bottleneck and
// the explanation. 1 where either is no function of the machine.
int why(const pci::Machine& machine, std::string_view provider, std::string_view client, bool json,
        std::ostream& out, std::ostream& err);

}  // namespace rig::tool
