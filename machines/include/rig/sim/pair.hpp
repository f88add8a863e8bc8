// rig/sim/pair.hpp: two simulated computers, each a rig::sim::System of one Layout
// (layouts.hpp) with the simulated GPU's model at its GPU and a bnxt model at its NIC,
// the two NICs' ports joined by a cable: a simulated wire, or two datagram cables on
// 127.0.0.1 (UDP, one Ethernet frame per datagram) sending to each other. What p2p_copy
// moves bytes between and what rig.sim.machines (Python) returns. The models run (the
// NIC's on its own thread, beside the CPU); no driver is opened: a user opens the GPU
// (rig::gpu::sim::open) and the NIC (rig::bnxt::Nic::open) on machine() as on any machine.
//
// Teardown order: a NIC's driver closes while its model still runs, so a Pair must outlive
// every driver opened on its machines. ~Pair unplugs the cables, then stops the models.
// Not thread-safe; the machines themselves are (rig::pci::Machine).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/bnxt/sim/cable.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/gpu/sim/model.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"
#include "rig/sim/layouts.hpp"
#include "rig/sim/system.hpp"

namespace rig::sim {

// One simulated computer of a Layout, its models running.
struct Computer {
    std::string name;  // "machine 1"
    std::shared_ptr<gpu::sim::Model> gpu_model;
    std::shared_ptr<bnxt::sim::Model> nic_model;
    std::optional<System> system;
    std::string gpu_bus, nic_bus;  // the Layout's: "0000:03:00.0", "0000:04:00.0"

    const pci::Machine& machine() const { return system->machine(); }
};

// How the two NICs' ports are joined: Wire (in-process), or UDP: each port bound to a
// port of 127.0.0.1 the kernel chooses and sending to the other's.
enum class Cabling { wire, udp };

// The GPU model's configuration for a GPU of `memory_bytes` bytes of memory, all of it
// behind its BAR, and the bnxt model's identity: what a Layout is built with.
gpu::sim::ModelConfig gpu_config(std::uint64_t memory_bytes);
Identity nic_identity();

// Builds computer `index` (1, 2: "machine 1", its NIC's MAC 02:00:00:00:00:0<index>) of
// `layout` into `computer` with a GPU model of `gpu` and starts its NIC model. Error
// naming the machine and what failed (the topology's System::build).
Result<void> build(Computer& computer, const Layout& layout, const gpu::sim::ModelConfig& gpu, std::uint8_t index);

// The cables that join the ports of `one` and `two`: one Wire, or two datagram cables
// connected to each other. Error naming the address where a socket cannot bind.
Result<std::vector<std::unique_ptr<bnxt::sim::Cable>>> cable(bnxt::sim::Model& one, bnxt::sim::Model& two,
                                                             Cabling cabling);

struct Pair {
    Pair() = default;
    Pair(const Pair&) = delete;
    Pair& operator=(const Pair&) = delete;
    ~Pair();

    std::string topology;  // the Layout's name
    Computer one, two;     // machine 1 and machine 2
    // The Wire, or machine 1's datagram cable then machine 2's. The first carries every
    // frame between the two NICs, both ways.
    std::vector<std::unique_ptr<bnxt::sim::Cable>> cables;
};

// Two computers of `layout` with GPUs of `gpu` (the layout's GPU identity must be that
// config's), running and cabled. Error naming the machine and what failed.
Result<std::unique_ptr<Pair>> pair(const Layout& layout, const gpu::sim::ModelConfig& gpu,
                                   Cabling cabling = Cabling::wire);
// The built-in topology `name` (layouts.hpp) with GPUs of `gpu_memory_bytes` (a power of
// two >= 64 KiB) whose BAR2 is `bar_bytes` (a power of two at most the memory; 0: all of
// it; small-bar's point is a smaller one). Error listing the built-in names where `name`
// is none, else as above. Throws std::invalid_argument naming a size that is no such power
// (gpu::sim::Model).
Result<std::unique_ptr<Pair>> pair(std::string_view name, std::uint64_t gpu_memory_bytes, std::uint64_t bar_bytes,
                                   Cabling cabling = Cabling::wire);

}  // namespace rig::sim
