// rig/pci/nics.hpp: which NIC for which GPU. The machine's NICs ranked for a function,
// each with its reasons, and a pairing of every GPU with a NIC.
//
// The NICs are the functions of base class 0x02 (network controller) and 0x0c06
// (InfiniBand controller), SR-IOV VFs included (names.hpp, Kind::Nic). For a function G
// (a GPU, or any other), they rank by, in order:
//   1. forwards: the NIC's requests reach G's BAR (Routes::verdict(G, NIC), Linux's
//      p2pdma rule), before not;
//   2. distance: below a common switch or root port (Distance::Switch), then below one
//      host bridge (Bridge), then below two host bridges (System) on the same NUMA node,
//      then where a NUMA node is unknown (sysfs numa_node -1 or unreadable), then on
//      different NUMA nodes; a route that is unread ranks last;
//   3. the route's bottleneck (Route::bottleneck): more bytes per second first, an unknown
//      one after every known one;
//   4. bus order (BusAddress), where NICs equal at 1-3 are a tie, and say so.
// The distance is a class, not a count of hops: bridges inside one switch (a switch that
// shows itself as several levels of virtual bridges) change nothing (docs/bugs.md B04), and
// nodes are compared as whole nodes of the tree, never as strings, so how sysfs spells
// its links changes nothing either (B02).
//
// The pairing (NCCL's rails): each GPU gets the first of its ranking; GPUs whose rankings
// tie the same NICs first (the GPUs of one switch with the NICs of that switch) are spread
// over them: the i-th of those GPUs in bus order gets the i-th of those NICs in bus order,
// round again where GPUs outnumber them. An override (a user's GPU=NIC) replaces a GPU's
// pair and leaves it out of the spreading.
//
// Plain values and functions of an immutable Routes: safe from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/routes.hpp"
#include "rig/result.hpp"

namespace rig::pci {

// Whether two functions' NUMA nodes are the same.
enum class Numa {
    Same,     // both known (0 or above) and equal
    Other,    // both known and different
    Unknown,  // either is -1 (the kernel gives none) or unreadable
};

// One NIC of a ranking, with what ranked it.
struct RankedNic {
    std::string nic;                      // its bus address
    bool forwards = false;                // step 1
    std::optional<Distance> distance;     // step 2; nullopt: the route is unread
    Numa numa = Numa::Unknown;            // step 2, for Distance::System
    std::optional<int> numa_node;         // the NIC's numa_node as sysfs gives it (-1: none)
    std::optional<LinkState> bottleneck;  // step 3 (Route::bottleneck)
    std::optional<std::uint64_t> bottleneck_bytes_per_second;
    bool tie = false;                    // equal at steps 1-3 to another NIC of the ranking
    std::optional<std::string> common;   // the common node of the route, where there is one
    std::string host_bridge;             // the NIC's ("pci0000:40")
    std::vector<RouteLink> downtrained;  // the route's links that trained below both ends
    // For people: "switch 0000:1a:00.0, Gen5 x16, NUMA 0"; "bridge pci0000:00, ...";
    // "system, ..., NUMA 1 (the GPU's 0)"; "not peer-to-peer, ..." where it does not forward.
    std::string why;
};

// The machine's NICs ranked for the function `function` (an index of routes.functions()),
// the function itself left out. Throws std::invalid_argument for an index not below
// routes.functions().size().
std::vector<RankedNic> rank_nics(const Routes& routes, std::size_t function);

// A user's pin of a GPU to a NIC.
struct Override {
    std::string gpu, nic;  // bus addresses
    friend bool operator==(const Override&, const Override&) = default;
};

// "GPU=NIC" entries separated by commas, spaces or new lines; '#' starts a comment that
// runs to the end of its line. Addresses may be short or uppercase ("1b:00.0"); they come
// back in Linux's spelling. Error naming the entry that is no GPU=NIC of bus addresses.
Result<std::vector<Override>> parse_overrides(std::string_view text);

// A GPU's pair.
struct Pairing {
    std::string gpu;                 // its bus address
    std::vector<RankedNic> ranked;   // rank_nics for it
    std::optional<std::string> nic;  // the paired NIC; nullopt: the machine has none
    bool overridden = false;         // the user chose it
    // For people: what chose it: "its first", "spread: the 2nd of 2 GPUs that rank
    // 0000:1c:00.0 and 0000:1d:00.0 first", "override".
    std::string why;
};

// Every GPU of the machine (is_gpu, in bus order) with its pair, and every other function
// an override names. Error, naming the override, where it names a function the machine
// does not have, a NIC side that is no NIC ("0000:1b:00.0 is no NIC: class 0x030200"),
// or one GPU twice.
Result<std::vector<Pairing>> pair_nics(const Routes& routes, std::span<const Override> overrides = {});

// "same", "other", "unknown".
std::string_view to_string(Numa n);

}  // namespace rig::pci
