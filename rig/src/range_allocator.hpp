// Ranges of an address space handed out and given back (internal to rig_pci): the IOVAs
// of an IOMMU domain (local VFIO and the simulator), and the simulator's physical memory
// and BAR apertures. Addresses are plain numbers here; callers give them their types.
//
// Placement is top-down, as Linux's IOVA allocator places below a device's DMA mask: the
// highest aligned range that ends at or below `below`. So a driver that forgets to bound
// its addresses (Function::set_dma_bits) gets addresses above 4 GiB at once.
// Not thread-safe: its owner locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace rig::pci {

class RangeAllocator {
public:
    // Makes [start, end) free. Ranges given must not overlap the free ones.
    void add(std::uint64_t start, std::uint64_t end);
    // The start of `bytes` free addresses aligned to `alignment` (a power of two), ending
    // at or below `below`, now taken; nullopt where none fits. bytes must be > 0.
    std::optional<std::uint64_t> allocate(std::uint64_t bytes, std::uint64_t alignment, std::uint64_t below);
    // Takes exactly [start, start + bytes): false (and nothing taken) where part of it is not free.
    bool take(std::uint64_t start, std::uint64_t bytes);
    // Gives [start, start + bytes) back, merged with its free neighbours.
    void free(std::uint64_t start, std::uint64_t bytes);
    // Free bytes in all.
    std::uint64_t free_bytes() const;

private:
    std::map<std::uint64_t, std::uint64_t> free_;  // start -> end, disjoint, not adjacent
};

}  // namespace rig::pci
