// The ceiling the PCI Express links put on each path (docs/bugs.md B30): no transfer is
// faster than the slowest link it crosses, so a figure above its ceiling is impossible and
// fails the run.
//
//   p2p     the NIC reads or writes the GPU's BAR: the bottleneck of the route between
//           them (Route::bottleneck: from the NIC up to the common node and down to the
//           GPU, or up to the root complex and down), on each machine;
//   bounce  the GPU's copy engine to host memory, the NIC from host memory (and back on
//           the receiver): every link from the GPU up to the root complex and from the
//           NIC up to it (Machine::host_bridge_route's links), on each machine.
// The lowest over the machines given is the ceiling. On the simulator the links are the
// simulated ones (Gen4 x16 unless a topology says otherwise), while the copy runs at the
// speed of this process's CPU, far below them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "machines.hpp"
#include "paths.hpp"
#include "report.hpp"

namespace p2p_copy {

struct Ceiling {
    std::optional<double> bytes_per_second;  // nullopt: a link on the way is unread
    std::string why;                         // "machine 1: Gen4 x16 0000:03:00.0 - 0000:02:08.0, 31.51 GB/s"
};

// The ceiling of `path` over `sides` (one side for a process of two, both in-process).
Ceiling ceiling(Path path, const std::vector<const Side*>& sides);

// Records `c` on `o`, and marks a path that ran faster than it impossible: not verified,
// with the reason (exit_status then fails the run).
void judge(Outcome& o, const Ceiling& c);

}  // namespace p2p_copy
