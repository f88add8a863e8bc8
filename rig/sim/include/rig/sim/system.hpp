// rig/sim/system.hpp: a simulated machine: a Topology (topology.hpp) whose endpoints are
// device models (device.hpp), reached through a transport as any other machine is
// (rig/pci/transport.hpp; docs/design.md, "The simulator").
//
// Building one:
//   Topology t(Cpu::amd());
//   auto hb = t.host_bridge(0, 0);
//   auto rp = t.add(hb, Spec::root_port(1, 0, 0x1022, 0x1483));
//   auto engine = std::make_shared<DmaEngine>();
//   Spec s = endpoint_spec(0, 0, engine->identity());
//   s.iommu_group = 7;                          // an IOMMU translates its DMA
//   t.add(rp, s);
//   auto system = System::build("sim0", t, {{"0000:01:00.0", engine}});
//   Function f = *Function::take(system->machine(), "0000:01:00.0");
//
// The machine it makes is Machine::make(name, ops, tree), `tree` being the topology's
// sysfs tree as fixture.hpp writes it, so forwards and distance are what Linux computes on
// that tree. The simulated bus follows them:
//  - System memory: alloc_dma's memory is this process's memory at simulated physical
//    addresses (page by page, scattered, unless contiguous is asked for); pin gives the
//    process's pages physical addresses too.
//  - The IOMMU: a function whose Spec has an iommu_group is Addressing::Iommu and each
//    take of it has a domain of its own: its alloc_dma and pin memory is mapped at IOVAs
//    (top-down below the take's DMA bound, never inside the BAR aperture), and its DMA
//    reaches only what is mapped. A function without one is Addressing::Physical and
//    reaches every page the machine has given out.
//  - A model's DMA (Port::read/write) goes to system memory as above, or to a BAR of a
//    function (its own included) only where forwards(provider = that function, client =
//    the requester) holds and the provider's Memory Space Enable is on. Anything else is
//    a fault: Unsupported Request (no mapping, no memory, Bus Master Enable off, the
//    target's memory decoding off) or Completer Abort (a BAR the route does not forward
//    to, a request that runs past a BAR's end). The model gets the status and the machine
//    counts the fault (faults(), recent_faults()). A request that faults moves nothing.
//  - Configuration space: each function's, from Topology::config_space, with an MSI-X
//    capability at 0x80 where the model has vectors (table and PBA at offset 0 and after
//    the table in the model's highest-numbered BAR) and Function Level Reset capability.
//    Writable: Command (I/O, Memory Space, Bus Master, Parity, SERR, Interrupt Disable),
//    Device Control (all but Initiate FLR, which resets the function), MSI-X Enable and
//    Function Mask; every other register ignores writes, as read-only registers do.
//    Known gap: BARs are read-only (hardware lets them be sized and moved; VFIO emulates
//    sizing), and Status's write-1-to-clear bits ignore writes.
//  - A take turns Memory Space on and Bus Master off, and enables MSI-X as VFIO's
//    interrupt setup does; interrupts from the model reach FunctionOps::interrupt while
//    MSI-X is enabled and not masked. reset() is a Function Level Reset: the model resets
//    and Command, Device Control and MSI-X return to power-on values (VFIO restores the
//    saved configuration around a reset; the simulator, like the bare hardware, does not:
//    a driver enables what it needs again).
//  - BAR windows: a BAR whose model gives memory (Device::memory) is mapped; a register
//    BAR is a remote window whose accesses call Device::read/write, and read all ones
//    once the function was given back, stopped answering, or its Memory Space is off.
//
// Two Systems in one process are two machines: their functions, memory and IOMMUs are
// apart. A System is a handle: copies share one machine, which lives while any copy, its
// Machine or a Function or Window of it does; when it goes, every model is detached.
// Thread safety: every member may be called from several threads, and models may run on
// threads of their own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"
#include "rig/sim/device.hpp"
#include "rig/sim/topology.hpp"

namespace rig::sim {

// A model at an endpoint of the topology, by bus address.
struct Attachment {
    std::string bus;
    std::shared_ptr<Device> model;
};

// A Spec for an endpoint that `identity` describes: its vendor, device, class and BARs,
// with a PCI Express Endpoint capability. Adjust it further (iommu_group, numa_node,
// driver, acs_control) before Topology::add.
Spec endpoint_spec(std::uint8_t device, std::uint8_t function, const Identity& identity);

// A DMA request that faulted.
struct Fault {
    std::string requester;  // its function's bus address
    pci::DmaAddress address;
    std::uint64_t bytes = 0;
    bool write = false;
    DmaStatus status = DmaStatus::Ok;
    std::string why;  // "no IOMMU mapping at IOVA 0x…", "0000:03:00.0 does not forward to …"
};

// What a function holds now, as the transport counts it (Function counts the same).
struct Holdings {
    std::size_t windows = 0;
    std::size_t pins = 0;
    std::size_t dma_allocations = 0;
    friend bool operator==(const Holdings&, const Holdings&) = default;
};

class System {
public:
    // Builds the machine named `name`: writes `topology`'s sysfs tree under `sysfs` (a
    // temporary directory of its own, removed with the machine, where not given) and
    // attaches each model (Device::attach) at its endpoint. Error naming the path where
    // the tree cannot be written. Throws std::invalid_argument where an attachment's bus
    // names no function of the topology or a bridge, two attachments name one function,
    // or a model's identity disagrees with its function's Spec (vendor, device, class
    // code, BAR sizes and kinds).
    static Result<System> build(std::string name, Topology topology, std::vector<Attachment> models,
                                std::optional<std::filesystem::path> sysfs = std::nullopt);

    // The machine: Machine::make(name, ops, sysfs()).
    const pci::Machine& machine() const;
    const Topology& topology() const;
    // Where its sysfs tree lies.
    const std::filesystem::path& sysfs() const;

    // DMA faults so far, and the last ones (at most 64), oldest first.
    std::uint64_t faults() const;
    std::vector<Fault> recent_faults() const;

    // What the function at `bus` holds now. Throws std::invalid_argument if no model
    // sits there.
    Holdings holdings(std::string_view bus) const;
    // Bytes of system memory the machine has given physical addresses to (DMA memory and
    // pinned pages, those a release kept included).
    std::uint64_t memory_in_use() const;

    struct State;  // rig/sim/src/state.hpp

private:
    friend class Faults;  // the test-only fault injection (rig_sim_faults) reaches the state
    System(std::shared_ptr<State> state, pci::Machine machine)
        : state_(std::move(state)), machine_(std::move(machine)) {}
    std::shared_ptr<State> state_;
    pci::Machine machine_;
};

}  // namespace rig::sim
