// The peer-to-peer rule of route.cpp on two ways already read (internal to rig_pci), so
// that Machine::route (two ways read now) and Routes (every way read once) answer by one
// rule. route.cpp's opening comment states it.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rig/pci/machine.hpp"
#include "sysfs.hpp"

namespace rig::pci {

// What the host-bridge allow-list says of one host bridge (__host_bridge_whitelist()).
struct HostBridgeAnswer {
    bool allowed = false;
    std::string why;
};

// What Step C reads besides the two ways: the boot CPU, and each host bridge's
// representative judged for a pair within it (`same`) and across two (`cross`).
struct RuleInputs {
    struct HostBridge {
        HostBridgeAnswer same, cross;
    };
    sysfs::Cpu cpu;
    std::unordered_map<std::string, HostBridge> host_bridges;  // by host bridge directory
};

// Reads the CPU and the representative of each host bridge of `ways` (nullptr entries
// skipped), under root.
RuleInputs rule_inputs(const std::filesystem::path& root, std::span<const sysfs::Way* const> ways);

// The verdict and distance alone, with no text built: what a matrix cell needs.
// decide(...).verdict and .distance are the same.
struct Answer {
    Verdict verdict = Verdict::Unread;
    Distance distance = Distance::System;
};
Answer answer(const sysfs::Way& provider, const sysfs::Way& client, const RuleInputs& in);

// The whole route, explained. `in` must hold both ways' host bridges.
Route decide(std::string_view provider_bus, std::string_view client_bus, const sysfs::Way& provider,
             const sysfs::Way& client, const RuleInputs& in);
// Step C alone (Machine::host_bridge_route).
Route host_bridge_decide(std::string_view provider_bus, std::string_view client_bus, const sysfs::Way& provider,
                         const sysfs::Way& client, const RuleInputs& in);

}  // namespace rig::pci
