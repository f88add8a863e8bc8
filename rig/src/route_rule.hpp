// The peer-to-peer rule of route.cpp on two ways already read (internal to rig_pci), so
// that Machine::route (two ways read now) and Routes (every way read once) answer by one
// rule. route.cpp's opening comment states it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/machine.hpp"
#include "sysfs.hpp"

namespace rig::pci {

// What the host-bridge allow-list says of one host bridge (__host_bridge_whitelist()).
struct HostBridgeAnswer {
    bool allowed = false;
    std::string why;
};

// Numbers the nodes and host bridges of `ways`, read together: one number per directory
// (a node on several ways gets one number), so that the rule compares nodes as whole
// nodes of one tree, by number (never by spelling: a sysfs link's spelling is resolved
// before, docs/bugs.md B02). Host bridges are numbered 0, 1, ... in a space of their own.
// Returns how many host bridges there are.
std::uint32_t number(std::span<sysfs::Way* const> ways);

// What the verdict and distance need of one node of a way.
struct Step {
    std::uint32_t id = 0;    // Node::id
    bool read = false;       // its capability lists were read (Header::capabilities_read)
    bool redirects = false;  // its ACS Control redirects (Header::redirects())
};
// A way as steps, the function first, and its host bridge's number.
struct Leg {
    std::span<const Step> steps;
    std::uint32_t host_bridge = 0;
};
std::vector<Step> steps_of(const sysfs::Way& way);

// What Step C reads besides the two ways: the boot CPU, and each host bridge's
// representative judged for a pair within it (`same`) and across two (`cross`), by
// host bridge number.
struct RuleInputs {
    struct HostBridge {
        HostBridgeAnswer same, cross;
    };
    sysfs::Cpu cpu;
    bool cpu_rule = false;  // the CPU's rule forwards every pair
    std::vector<HostBridge> host_bridges;
};

// Reads the CPU and the representative of each host bridge of `ways`, numbered (number())
// before, under root.
RuleInputs rule_inputs(const std::filesystem::path& root, std::span<const sysfs::Way* const> ways,
                       std::uint32_t host_bridges);

// The verdict and distance alone, with no text built: what a matrix cell needs.
// decide(...).verdict and .distance are the same.
struct Answer {
    Verdict verdict = Verdict::Unread;
    Distance distance = Distance::System;
};
Answer answer(const Leg& provider, const Leg& client, const RuleInputs& in);

// The whole route, explained. `in` must hold both ways' host bridges.
Route decide(std::string_view provider_bus, std::string_view client_bus, const sysfs::Way& provider,
             const sysfs::Way& client, const RuleInputs& in);
// Step C alone (Machine::host_bridge_route).
Route host_bridge_decide(std::string_view provider_bus, std::string_view client_bus, const sysfs::Way& provider,
                         const sysfs::Way& client, const RuleInputs& in);

}  // namespace rig::pci
