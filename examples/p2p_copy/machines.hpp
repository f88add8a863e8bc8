// The two simulated machines p2p_copy moves bytes between: the computers of
// rig/sim/pair.hpp (a Layout of rig/sim/layouts.hpp with the simulated GPU's model at its
// GPU and a bnxt model at its NIC, the two NICs' ports cabled), each opened by its drivers
// (rig::gpu::sim::open, rig::bnxt::Nic::open) as on any machine.
//
// Everything a Side holds lives until the Pair goes: Pair's destructor closes the NICs
// (while their models still run), then the machines go as rig::sim::Pair's teardown does.
//
// For p2p_copy as two processes (session.hpp) a process builds one machine, a Local: the
// same Side, its NIC's port on a datagram cable of its own, torn down in the same order.
// Not thread-safe; the data path (paths.hpp) uses a Pair from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/bnxt/sim/cable.hpp"
#include "rig/bnxt/sim/datagram.hpp"
#include "rig/gpu/gpu.hpp"
#include "rig/gpu/sim/model.hpp"
#include "rig/pci/machine.hpp"
#include "rig/sim/pair.hpp"
#include "rig/sim/system.hpp"
#include "rig/space.hpp"

namespace p2p_copy {

// One machine of the pair: its simulated computer (rig/sim/pair.hpp) and the drivers
// opened on it.
struct Side {
    const rig::sim::Computer* computer = nullptr;  // the Pair's or the Local's
    std::shared_ptr<rig::Space> space;             // the GPU vendor's, one per machine
    std::optional<rig::gpu::Gpu> gpu;
    std::optional<rig::bnxt::Nic> nic;

    // The computer's name ("machine 1"), machine, and its GPU's and NIC's bus addresses.
    const std::string& name() const { return computer->name; }
    const rig::pci::Machine& machine() const { return computer->machine(); }
    const std::string& gpu_bus() const { return computer->gpu_bus; }
    const std::string& nic_bus() const { return computer->nic_bus; }
    // Whether the NIC reaches the GPU's BAR: forwards(provider = GPU, client = NIC), explained.
    rig::pci::Route route() const { return machine().route(gpu_bus(), nic_bus()); }
};

// The two machines, running and cabled (rig::sim::Pair), and the drivers opened on them.
struct Pair {
    Pair() = default;
    Pair(const Pair&) = delete;
    Pair& operator=(const Pair&) = delete;
    ~Pair();  // closes the NICs while their models still run, then the machines go

    std::unique_ptr<rig::sim::Pair> machines;
    std::string topology;  // the Layout's name
    Side one, two;         // the sender and the receiver
};

// This process's machine when the other runs in another process: machine 1 (the sender)
// or machine 2 (the receiver), its port on a datagram cable bound to a local UDP address
// and connected later, to the peer's cable (session.hpp).
struct Local {
    Local() = default;
    Local(const Local&) = delete;
    Local& operator=(const Local&) = delete;
    ~Local();  // as ~Pair, and as rig::sim::Pair's: the NIC, the cable, the model

    rig::sim::Computer computer;
    std::string topology;  // the Layout's name
    Side side;
    std::unique_ptr<rig::bnxt::sim::DatagramCable> cable;
};

// p2p_copy's machines, as topologies (rig/sim/layouts.hpp): the built-in ones and those
// read from a `rig snapshot` tree.
using rig::sim::builtin;
using rig::sim::builtin_names;
using rig::sim::Cabling;
using rig::sim::from_snapshot;
using rig::sim::gpu_config;
using rig::sim::Layout;
using rig::sim::nic_identity;

// Two machines of `layout`, each with a GPU of `gpu_memory_bytes` (a power of two >= 64
// KiB), running, opened and cabled. Error naming the machine and what failed: the sysfs
// tree, the GPU's or the NIC's open, a datagram cable's socket.
rig::Result<std::unique_ptr<Pair>> open_pair(const Layout& layout, std::uint64_t gpu_memory_bytes,
                                             Cabling cabling = Cabling::wire);
// The same with GPUs of `gpu` (its BAR smaller than its memory, as small-bar's): the
// layout's GPU identity must be that config's.
rig::Result<std::unique_ptr<Pair>> open_pair(const Layout& layout, const rig::gpu::sim::ModelConfig& gpu,
                                             Cabling cabling = Cabling::wire);

// Machine `index` (1: the sender, 2: the receiver) of `layout`, running and opened, its
// port cabled to a datagram cable bound to `cable_address` ("127.0.0.1:18515",
// "[::1]:18515"), not yet connected. Error naming the machine and what failed, or the
// address where the cable cannot bind.
rig::Result<std::unique_ptr<Local>> open_local(const Layout& layout, std::uint64_t gpu_memory_bytes, std::uint8_t index,
                                               std::string_view cable_address);

}  // namespace p2p_copy
