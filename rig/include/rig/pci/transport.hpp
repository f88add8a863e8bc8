// rig/pci/transport.hpp: the operations a transport gives to make a Machine of another
// computer (docs/api.md, "Transports"). The simulator (rig::sim) is one transport; a
// network agent can be another; this process's own machine is reached through the same
// records (VFIO) but without a transport.
//
// The contract, as the reference page gives it:
//  - Function refuses misuse before it calls an operation, so an operation is called
//    only with arguments Function accepts: alloc_dma's size is rounded up to `page`, its
//    va (when given) lies in a range `reserve` reserved; a pin's range starts on a page.
//  - Function counts each function's windows and pins, and passes every pin and unpin of
//    a live function on, so the transport counts them too.
//  - Once Function::release began, no use of the function starts, and the uses running
//    finish before release's own config, set_config and release calls. release, the last
//    use, or a use refused after release runs them, never two at once.
//  - No free_dma, unpin, unmap_peer or unmap follows the start of release: release gives
//    back everything the take holds (its windows, and once bus mastering reads off, its
//    DMA memory, pins and peer mappings, those an exception kept Function from recording
//    included).
//  - An exception may end release part-way; Function then calls it again, and it gives
//    back what it had not, nothing twice.
//  - alloc_dma, pin, map_peer, free_dma, unpin and unmap_peer run inside a lock of the
//    calling thread: they
//    call nothing of rig's or of a driver's, and return on the thread that called them.
//  - A request a transport cannot run returns an Error whose message starts with the
//    machine's name; so does the reason it failed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/window.hpp"
#include "rig/result.hpp"

namespace rig::pci {

// The operations on one function a transport took (the page's `fn`).
class FunctionOps {
public:
    virtual ~FunctionOps() = default;

    virtual Addressing addressing() const = 0;
    // Whether, when taken, the function still reached memory a dead process left, which
    // it may still write. Read once, at the take.
    virtual bool inherited() const = 0;

    // The `bytes`-byte value (1, 2 or 4) at byte `offset` of configuration space. Only
    // Function's accessors call it.
    virtual std::uint32_t config(std::uint32_t offset, unsigned bytes) = 0;
    // Writes the low `bytes` bytes of value at `offset`.
    virtual void set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) = 0;

    // BAR `index` (0..5), or nullopt where the function decodes none there.
    virtual std::optional<Bar> bar(unsigned index) = 0;
    // Function::map of BAR `index`: `bytes` bytes from `offset`.
    virtual Result<Window> map(unsigned index, std::uint64_t offset, std::uint64_t bytes, Caching caching) = 0;
    // Function::unmap. Raises only where an exception cuts it; what remains of a window it
    // did not unmap is left to release.
    virtual void unmap(const Window& window) = 0;

    // Waits up to `timeout` for interrupt `vector` (MSI-X) of the function: true if one
    // arrived (and is consumed), false on timeout or where the function has no such vector.
    virtual bool interrupt(unsigned vector, std::chrono::nanoseconds timeout) = 0;

    // Function::reset (a Function Level Reset), without waiting for the function to answer.
    virtual Result<void> reset() = 0;
    // Records that the function's device was reset, so it reaches no memory dead
    // processes left; that memory goes once no other function reaches it.
    virtual Result<void> forget() = 0;

    // Function::alloc_dma: `bytes` (a multiple of the page) of zeroed system memory whose
    // runs end at or below `below` where the machine chooses their addresses (behind an
    // IOMMU); placed at process address `va` when given. nullopt: no memory for it.
    virtual Result<std::optional<Dma>> alloc_dma(Contiguity contiguity, std::optional<std::uintptr_t> va,
                                                 std::uint64_t below, std::uint64_t bytes) = 0;
    virtual void free_dma(const Window& window) = 0;

    // Function::pin: the runs of the process's `bytes` bytes at `address` (on a page),
    // pinned for the function, placed as alloc_dma places its runs. nullopt: no room.
    virtual Result<std::optional<std::vector<Run>>> pin(std::uint64_t below, std::uintptr_t address,
                                                        std::uint64_t bytes) = 0;
    virtual void unpin(std::uintptr_t address, std::uint64_t bytes) = 0;

    // Function::map_peer: `bytes` (a multiple of the page) of BAR `bar` of the function at
    // `provider` on the same machine, from byte `offset` (on a page), mapped into this
    // function's IOMMU domain at IOVAs ending at or below `below`: the IOVA of the first
    // byte, at which this function's requests reach the BAR through the root complex.
    // nullopt: no room. Error naming both functions and the way tried where the machine
    // cannot map it (no IOMMU, no such BAR, the range outside it, the kernel refused).
    // Counted with the pins; release gives it back with them.
    virtual Result<std::optional<DmaAddress>> map_peer(std::string_view provider, unsigned bar, std::uint64_t offset,
                                                       std::uint64_t bytes, std::uint64_t below) = 0;
    virtual void unmap_peer(DmaAddress address, std::uint64_t bytes) = 0;

    // Turns bus mastering off and gives back everything the take holds. false if memory
    // the function reached may still be written once given back (the system refused the
    // write that turns bus mastering off). Raises only where an exception cuts it; called
    // again, it gives back what it had not, nothing twice.
    virtual bool release() = 0;
};

// The operations of a transport (the page's `ops`).
class Ops {
public:
    virtual ~Ops() = default;
    // Why the machine can no longer be reached, once it cannot (the transport's failed).
    virtual std::optional<std::string> failed() const = 0;
    // The machine's page size in bytes.
    virtual std::uint64_t page() const = 0;
    // The machine's functions, in any order.
    virtual Result<std::vector<Id>> functions() = 0;
    // Function::take on the machine.
    virtual Result<std::unique_ptr<FunctionOps>> take(std::string_view bus) = 0;
    // Machine::reserve on the machine.
    virtual Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) = 0;
};

}  // namespace rig::pci
