// rig/sim/device.hpp: the interface between a device model and the simulated machine.
//
// A device model implements the device's side of its hardware-software interface byte
// for byte (docs/design.md, "The simulator"): registers behind BARs, memory BARs, reset,
// interrupts, and DMA. It is reached only the way hardware is reached: configuration and
// BAR accesses as (offset, width) calls, and it reaches its machine only through its Port:
// DMA requests routed by the simulated bus and MSI-X vectors.
//
// The bus routes a model's DMA to system memory through the machine's IOMMU (or at
// physical addresses where there is none), and to another function's BAR only where
// forwards(provider = that function, client = this one) holds. Any other request faults
// the way hardware does: the model sees the completion status (Unsupported Request or
// Completer Abort) and the machine counts the fault. A function whose Bus Master Enable
// is off issues no request: it faults as Unsupported Request.
//
// Threading: a model may run on a thread of its own, as hardware runs beside the CPU.
// Its BAR accesses arrive on the driver's threads; it must synchronize them with its own
// thread itself. Port calls are safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "rig/pci/dma.hpp"

namespace rig::sim {

// The status of a DMA request, as the completion (or its absence) tells the requester
// (PCIe Base 6.0 §2.2.9: Successful Completion, Unsupported Request, Completer Abort).
enum class DmaStatus {
    Ok,
    UnsupportedRequest,  // nothing decodes the address, the IOMMU has no mapping, bus mastering is off
    CompleterAbort,      // the target refused it: a peer's BAR the route does not forward to
};

// What a device model reaches of its machine.
class Port {
public:
    virtual ~Port() = default;

    // A DMA read or write of the function at a bus address. Bytes move in address order;
    // an aligned access of 1, 2, 4 or 8 bytes is one atomic access (acquire for reads,
    // release for writes), so a model that writes a ring entry's valid byte as its own,
    // last, write publishes the entry to a driver that reads the valid byte with acquire
    // (docs/hsi.md §0, §4.5.1). A request that faults moves nothing.
    virtual DmaStatus read(pci::DmaAddress address, std::span<std::byte> out) = 0;
    virtual DmaStatus write(pci::DmaAddress address, std::span<const std::byte> in) = 0;

    // Raises MSI-X vector `vector` of the function (dropped where the function has no
    // such vector or MSI-X is off).
    virtual void interrupt(unsigned vector) = 0;

    // The function's bus address on its machine ("0000:41:00.0"), for messages.
    virtual const std::string& bus() const = 0;
};

// A BAR a model decodes.
struct BarSpec {
    std::uint64_t bytes = 0;  // a power of two >= 4096; 0: no BAR
    bool prefetchable = false;
    bool is64 = true;
};

// What a model is, as its configuration space tells it.
struct Identity {
    std::uint16_t vendor = 0;
    std::uint16_t device = 0;
    std::uint32_t class_code = 0;   // 24 bits
    std::array<BarSpec, 6> bars{};  // a 64-bit BAR takes two slots: describe it at the even index
    unsigned msix_vectors = 0;      // 0: no MSI-X capability
};

class Device {
public:
    virtual ~Device() = default;

    virtual Identity identity() const = 0;

    // Called once, when the machine is built, before any other call. The port outlives
    // the model's use of it (until detach).
    virtual void attach(Port& port) = 0;
    // Called once, when the machine goes; the model stops its thread and uses the port
    // no more once it returns.
    virtual void detach() = 0;

    // A register access of `width` bytes (1, 2, 4 or 8) at `offset` of BAR `bar`. A model
    // answers a width or offset its device does not decode as the device does (reads of
    // all ones, writes dropped) and may count it as a fault.
    virtual std::uint64_t read(unsigned bar, std::uint64_t offset, unsigned width) = 0;
    virtual void write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) = 0;

    // Where BAR `bar` is plain memory (a GPU's memory BAR), that memory; empty where the
    // BAR is registers. A memory BAR is mapped into the process and reached by peers'
    // DMA directly, without calls to the model.
    virtual std::span<std::byte> memory(unsigned bar) = 0;

    // A Function Level Reset: the device returns to its state after power-on.
    virtual void reset() = 0;

    // The Command register's Bus Master Enable changed (the machine tracks it; a model
    // with DMA in flight may stop here).
    virtual void bus_master(bool on) { (void)on; }
};

}  // namespace rig::sim
