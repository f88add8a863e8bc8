// rig topo's NIC lines: each GPU's NICs in order of preference, the pair it got and why,
// and a warning for every downtrained link on a GPU-NIC route (rig/pci/nics.hpp). Its
// JSON member "nics" is rig/pci/json.hpp's.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "rig/pci/nics.hpp"

namespace rig::tool {

// The lines below the matrices. `labels` maps a bus address to its label ("GPU0").
void print_pairing(std::ostream& out, const std::vector<pci::Pairing>& pairs,
                   const std::map<std::string, std::string>& labels);

}  // namespace rig::tool
