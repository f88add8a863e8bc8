// rig/pci/function.hpp: a PCI function taken for this process, the layer every driver
// stands on (docs/api.md, "Transports"; docs/design.md).
//
// Lifecycle: take → (config, map, alloc_dma, pin, interrupt, reset …) → release.
// A Function is a handle: copies share one taken function. The last copy's destructor
// releases it if nobody did.
//
// On Machine::local() a take locks the function's sysfs `config` file (so two processes
// never drive one function) and goes through VFIO: iommufd where /dev/iommu and its
// uapi header exist, else the VFIO container and group API of linux/vfio.h. On a
// transport it calls Ops::take. Machine::at() takes nothing.
//
// Function refuses misuse before it calls an operation: out-of-bounds config offsets,
// widths other than 1, 2 or 4, a BAR index above 5, a window range outside its BAR, a
// size of 0, a va outside what Machine::reserve reserved, a pin not on a page, a window
// of another function — each throws std::invalid_argument naming the function and the
// value. It counts each function's windows and pins.
//
// Release (the page's order): no new use starts once release begins; uses running
// finish; bus mastering is turned off; then windows, DMA memory and pins go back. An
// exception may end release part-way: calling it again gives back only what is left.
// Every use after release began is refused (std::invalid_argument: "… was released").
//
// Thread safety: every member may be called from several threads at once.
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

class Function {
public:
    // Takes the function at `bus` of `machine` for this process. Error naming the bus and
    // the cause where it cannot: no such function; bound to another kernel driver
    // ("0000:03:00.0 is bound to the driver amdgpu"); taken by another process; VFIO not
    // available; the machine is reached without a way to take (Machine::at).
    static Result<Function> take(const Machine& machine, std::string_view bus);

    const std::string& bus() const;
    const Machine& machine() const;
    Addressing addressing() const;
    // Whether, when taken, it still reached memory a dead process left (read at the take).
    bool inherited() const;

    // Configuration space: the value of 1, 2 or 4 bytes at a byte offset (0..4095,
    // aligned to its width). Throws std::invalid_argument otherwise.
    std::uint8_t config8(std::uint32_t offset) const;
    std::uint16_t config16(std::uint32_t offset) const;
    std::uint32_t config32(std::uint32_t offset) const;
    void set_config8(std::uint32_t offset, std::uint8_t value) const;
    void set_config16(std::uint32_t offset, std::uint16_t value) const;
    void set_config32(std::uint32_t offset, std::uint32_t value) const;

    // The offset of capability `id` in the capability list (0x10: PCI Express, 0x11:
    // MSI-X), or nullopt. The walk is bounded: a list that loops ends it.
    std::optional<std::uint32_t> capability(std::uint8_t id) const;
    // Command register bits 1 (Memory Space Enable) and 2 (Bus Master Enable).
    void set_bus_master(bool on) const;
    bool bus_master() const;
    void set_memory_space(bool on) const;
    // PCI Express Device Control (capability + 0x08): bit 4 Enable Relaxed Ordering and
    // bit 11 Enable No Snoop (PCIe Base 6.0 §7.5.3.4). Error naming the function where
    // it has no PCI Express capability.
    Result<void> set_relaxed_ordering(bool on) const;
    Result<bool> relaxed_ordering() const;
    Result<void> set_no_snoop(bool on) const;
    Result<bool> no_snoop() const;

    // BAR `index` (0..5): its bus address and size; nullopt where it decodes none.
    std::optional<Bar> bar(unsigned index) const;
    // A window on `bytes` bytes of BAR `index` from byte `offset`. Error naming the
    // function and BAR where the system will not map it. Throws std::invalid_argument
    // where the range is not inside the BAR or bytes is 0.
    Result<Window> map(unsigned index, std::uint64_t offset, std::uint64_t bytes,
                       Caching caching = Caching::Uncached) const;
    // Gives a window back. Throws std::invalid_argument for a window this function did
    // not map (or already gave back).
    void unmap(const Window& window) const;

    // `bytes` (rounded up to the machine's page) of zeroed system memory the function can
    // DMA, with its runs; one run with Contiguity::Contiguous. Placed at process address
    // `va` when given, which must lie in a range Machine::reserve reserved. Runs end at or
    // below 2^dma_bits where the machine chooses them. Error naming the function and the
    // size where the machine has no memory for it.
    Result<Dma> alloc_dma(std::uint64_t bytes, Contiguity contiguity = Contiguity::Any,
                          std::optional<std::uintptr_t> va = std::nullopt) const;
    // Gives DMA memory back. Throws std::invalid_argument for memory this function did not
    // allocate.
    void free_dma(const Dma& dma) const;
    // Bounds the bus addresses of later runs to below 2^bits (32 ≤ bits ≤ 64).
    void set_dma_bits(unsigned bits) const;

    // The runs of the process's `bytes` bytes at `address` (on a page), pinned for the
    // function until unpin or release. Refused (Error) on a Physical function for memory
    // alloc_dma did not give: its pages would go back to the system when the process dies
    // while the device may still write them. Error where the system refuses to pin.
    Result<std::vector<Run>> pin(const void* address, std::uint64_t bytes) const;
    void unpin(const void* address, std::uint64_t bytes) const;

    // Maps `bytes` of BAR `bar` of another function of the machine, `provider`, from byte
    // `offset`, into this function's IOMMU domain, until unmap_peer or release: the run of
    // IOVAs at which this function's requests reach those bytes through the root complex
    // (Linux's PCI_P2PDMA_MAP_THRU_HOST_BRIDGE behind an IOMMU, drivers/pci/p2pdma.c: the
    // IOMMU translates, then the root complex carries the request to the BAR where its
    // rule allows; Machine::route says whether it does). Counted with the pins (pins()).
    // Error naming both functions where it cannot: this function reaches physical
    // addresses (no IOMMU: it reaches the BAR at its bus address, where the bus carries
    // it), no room below 2^dma_bits, the provider has no such BAR or the range lies
    // outside it, or the machine refused (the way tried and what refused it). Throws
    // std::invalid_argument if provider is not a bus address or is this function, bar is
    // above 5, bytes is 0, or offset or bytes is not a multiple of the machine's page.
    Result<Run> map_peer(std::string_view provider, unsigned bar, std::uint64_t offset, std::uint64_t bytes) const;
    // Gives a peer mapping back. Throws std::invalid_argument for a run map_peer did not
    // give (or that went back).
    void unmap_peer(const Run& mapped) const;

    // Waits up to `timeout` for MSI-X vector `vector`; true if it fired.
    bool interrupt(unsigned vector, std::chrono::nanoseconds timeout) const;

    // A Function Level Reset. Where the function was inherited, the memory a dead process
    // left it reaching is then forgotten (FunctionOps::forget).
    Result<void> reset() const;

    // Turns bus mastering off and gives back windows, DMA memory, pins and peer mappings.
    // false if memory the function reached may still be written (bus mastering would not
    // turn off). Calling it again after it returned does nothing and returns the same answer.
    bool release() const;
    // Why the function can no longer be reached (its machine's transport failed), if so.
    std::optional<std::string> failed() const;
    bool released() const;

    // How many windows and pins (peer mappings included) the function holds now.
    std::size_t windows() const;
    std::size_t pins() const;
    std::size_t dma_allocations() const;

    struct State;

private:
    explicit Function(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

}  // namespace rig::pci
