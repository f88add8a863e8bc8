// p2p_copy's machines, as topologies: rig/sim/layouts.hpp's built-in ones and those read
// from a `rig snapshot` tree, each naming where the simulated GPU and the bnxt NIC sit.
#pragma once

#include "rig/sim/layouts.hpp"

namespace p2p_copy {

using rig::sim::builtin;
using rig::sim::builtin_names;
using rig::sim::from_snapshot;
using rig::sim::Layout;

}  // namespace p2p_copy
