// rig/pci/json.hpp: the JSON documents of `rig ls --json`, `rig topo --json` and
// `rig topo --why PROVIDER CLIENT --json`, as text (two-space indented, bytes that are
// not UTF-8 replaced), so that the command line and the Python module (rig.Machine.topo())
// give one document from one piece of code. tools/rig/main.cpp's comment and README.md,
// "The rig command line", describe their members.
//
// Each reads the machine's files now and changes nothing; each may be called from several
// threads at once.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "rig/pci/machine.hpp"
#include "rig/pci/nics.hpp"
#include "rig/result.hpp"

namespace rig::pci {

// {"functions": [...]}: every function in bus order with its ids, class, kind, driver,
// NUMA node, IOMMU group, host bridge, upstream bridge, PF, buses and link. Error where
// the machine's functions cannot be described (snapshot.hpp, describe).
Result<std::string> ls_json(const Machine& machine);

// {"functions": [...], "pairs": [...], "nics": [...]}: the endpoints (functions that are
// not bridges) with their links; every ordered pair of them with its distance and whether
// the client's requests reach the provider's BAR; each GPU's NICs ranked and its pair
// (nics.hpp), `overrides` pinning GPUs to NICs. Error where the machine cannot be
// described or its routes read, or pair_nics refuses an override (naming it).
Result<std::string> topo_json(const Machine& machine, std::span<const Override> overrides = {});

// {"provider", "client", "verdict", "forwards", "distance", "common", "explanation",
// "vfio", "links", "bottleneck", "bottleneck_bytes_per_second"}: Machine::route for the
// pair, explained. The caller checks that both are functions of the machine.
std::string why_json(const Machine& machine, std::string_view provider, std::string_view client);

}  // namespace rig::pci
