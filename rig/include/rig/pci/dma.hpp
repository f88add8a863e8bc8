// rig/pci/dma.hpp: the address space a device's DMA lands in.
//
// A DmaAddress is an address on a machine's bus as a function's TLPs carry it: a physical
// address where no IOMMU translates, an IOVA behind one, or an address inside another
// function's BAR. It is never a process address (a pointer) and never a BAR offset
// (a std::uint64_t offset into a Window); the types keep the three apart
// (docs/design.md, "Names").
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

#include "rig/pci/window.hpp"

namespace rig::pci {

struct DmaAddress {
    std::uint64_t value = 0;
    friend auto operator<=>(const DmaAddress&, const DmaAddress&) = default;
    friend DmaAddress operator+(DmaAddress a, std::uint64_t bytes) { return {a.value + bytes}; }
};

// `bytes` bytes contiguous on the bus from `address` on.
struct Run {
    DmaAddress address;
    std::uint64_t bytes = 0;
    friend bool operator==(const Run&, const Run&) = default;
};

// The page runs are cut in and checked against: 4096 bytes, the smallest page of an x86-64
// host, of its IOMMU's page tables (Intel VT-d, AMD-Vi) and of a bnxt page list (Linux's
// bnxt_re: BNXT_QPLIB_BASE_PG_SIZE). Machine::page() is the host's own page size, which
// may be larger.
inline constexpr std::uint64_t page_bytes = 4096;

// How a function reaches system memory.
enum class Addressing {
    Physical,  // at physical addresses of its machine, which no IOMMU translates
    Iommu,     // through an IOMMU, at device addresses the process maps for it alone
};

// Whether DMA memory must be one run on the bus.
enum class Contiguity { Any, Contiguous };

// How the process maps a BAR: uncached, or write-combining (prefetchable BARs only).
enum class Caching { Uncached, WriteCombining };

// A BAR as its function decodes it.
struct Bar {
    DmaAddress address;  // where the BAR lies on the bus
    std::uint64_t bytes = 0;
    bool prefetchable = false;
    friend bool operator==(const Bar&, const Bar&) = default;
};

// System memory a function can DMA: the process reads and writes it through `window`;
// the device reaches it at `runs`, in order, which together cover the window's bytes.
struct Dma {
    Window window;
    std::vector<Run> runs;
};

}  // namespace rig::pci
