// The simulated GPU driver's record of free VRAM: extents (offset, bytes) of VRAM, in
// units of the driver's granule. An allocation takes the first
// extent that holds it whole, or else free extents in address order until it is covered:
// memory need not be contiguous, since the segment table maps each extent at its place in
// the allocation's VA range and Memory::runs lists one run per extent. Not thread-safe:
// the driver's lock guards it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace rig::gpu::sim {

struct Extent {
    std::uint64_t offset = 0;  // in VRAM
    std::uint64_t bytes = 0;
    friend bool operator==(const Extent&, const Extent&) = default;
};

class Extents {
public:
    // `bytes` of VRAM from offset 0, all free.
    explicit Extents(std::uint64_t bytes);

    // Extents holding `bytes`, in the order they back the allocation; nullopt where less
    // is free.
    std::optional<std::vector<Extent>> take(std::uint64_t bytes);
    // Gives extents back, merging neighbours.
    void give(const std::vector<Extent>& extents);
    std::uint64_t free() const { return free_bytes_; }
    // Free bytes below VRAM offset `limit` (the part of VRAM behind a BAR of that size).
    std::uint64_t free_below(std::uint64_t limit) const;

private:
    std::map<std::uint64_t, std::uint64_t> free_;  // offset -> bytes
    std::uint64_t free_bytes_ = 0;
};

}  // namespace rig::gpu::sim
