// rig topo's NIC lines and JSON member "nics": each GPU's NICs in order of preference, the
// pair it got and why, and a warning for every downtrained link on a GPU-NIC route
// (rig/pci/nics.hpp).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "rig/pci/nics.hpp"

namespace rig::tool {

// The lines below the matrices. `labels` maps a bus address to its label ("GPU0").
void print_pairing(std::ostream& out, const std::vector<pci::Pairing>& pairs,
                   const std::map<std::string, std::string>& labels);

// [{"gpu": BUS, "ranked": [{"nic": BUS, "forwards": bool, "distance": "switch"|"bridge"|
// "system", "numa": "same"|"other"|"unknown", "bottleneck_bytes_per_second": N or null,
// "tie": bool}, ...], "paired": BUS or null}, ...]
nlohmann::json nics_json(const std::vector<pci::Pairing>& pairs);

}  // namespace rig::tool
