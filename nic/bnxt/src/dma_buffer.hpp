// nic/bnxt/src/dma_buffer.hpp: DMA memory the driver owns (rings, page lists, response and
// side buffers, host regions), and queue memory described by a page list (§2).
//
// A DmaBuffer gives its memory back (Function::free_dma) when it goes, unless the function
// was released first: release turned bus mastering off and gave back everything, so the
// memory is no longer the buffer's to free (rig/pci/function.hpp, "Release").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "rig/bnxt/detail/page_list.hpp"
#include "rig/bnxt/hsi/pbl.hpp"
#include "rig/pci/function.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

class DmaBuffer {
public:
    DmaBuffer() = default;
    // `bytes` (rounded up to the page) of zeroed DMA memory of `fn`, mapped into the
    // process: the driver builds WQEs in its rings and reads CQEs there in place, and pins
    // host regions by address. Error where the machine has none ("host region: " and
    // Function::alloc_dma's message), or hands it out unmapped (a machine reached through
    // a transport).
    static Result<DmaBuffer> allocate(const pci::Function& fn, std::uint64_t bytes, pci::Contiguity contiguity,
                                      std::string_view what);
    DmaBuffer(DmaBuffer&& other) noexcept;
    DmaBuffer& operator=(DmaBuffer&& other) noexcept;
    DmaBuffer(const DmaBuffer&) = delete;
    DmaBuffer& operator=(const DmaBuffer&) = delete;
    ~DmaBuffer() { reset(); }

    // Gives the memory back now (nothing if the function was released or it is empty).
    void reset();
    explicit operator bool() const { return fn_.has_value(); }

    const pci::Window& window() const { return dma_.window; }
    const std::vector<pci::Run>& runs() const { return dma_.runs; }
    std::uint64_t bytes() const { return dma_.window.size(); }
    // The bus address of byte `offset`. Throws std::invalid_argument beyond the buffer.
    std::uint64_t bus(std::uint64_t offset = 0) const;
    // Every byte set to `value`: a poison pattern before the device learns the address.
    void fill(std::byte value) const;

private:
    std::optional<pci::Function> fn_;
    pci::Dma dma_;
};

// Memory described to the NIC by a page list of 4 KiB pages (§2.2).
struct PageList {
    hsi::PblLevel level = hsi::PblLevel::LVL_0;
    std::uint64_t base = 0;  // what the firmware is given: the data page, or the first table page
    DmaBuffer table;         // the PTE/PDE pages (empty at level 0)
};

// The page list of the 2^shift-byte pages at `pages` (bus addresses): table pages
// allocated and written. Error naming `what` where there is no memory, or where the list
// is longer than level 2 holds.
Result<PageList> make_page_list(const pci::Function& fn, std::span<const std::uint64_t> pages,
                                detail::PageListKind kind, std::string_view what,
                                hsi::PblLevel at_least = hsi::PblLevel::LVL_0);

// A ring or queue of `bytes` bytes (rounded up to 4 KiB pages), filled with `poison`
// before the device learns of it (docs/design.md), and its page list (queue kind).
struct QueueMemory {
    DmaBuffer memory;
    PageList pages;
};
Result<QueueMemory> allocate_queue(const pci::Function& fn, std::uint64_t bytes, std::byte poison,
                                   std::string_view what);

// §2.3: the PG code and level of a queue's page list, as CREATE_CQ/CREATE_QP carry it.
inline constexpr std::uint8_t pg_code_4k = static_cast<std::uint8_t>(hsi::PgSize::PG_4K);

// Poison patterns: rings the driver writes and the device reads (SQ, RQ, CMDQ) are all
// ones, as ixy's; rings the device writes (CQ, NQ, CREQ) have their valid/toggle bit (bit
// 0 of byte 24 of a CQE, of byte 8 of an NQ or CREQ entry) clear, so that no entry reads
// as new before the device wrote it, and the rest set.
inline constexpr std::byte poison_device_reads{0xFF};
inline constexpr std::byte poison_device_writes{0xFE};

}  // namespace rig::bnxt
