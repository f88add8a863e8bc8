// bench/baseline/best_fit.hpp: the allocator rig::Space is measured against: best fit
// over ordered maps, with alignment, the way Linux's drm_mm allocates GPU address space
// in its best-fit mode (drivers/gpu/drm/drm_mm.c, DRM_MM_INSERT_BEST).
//
// Holes are kept twice: by address, to merge a freed range with its neighbours, and by
// (size, address). An allocation starts at the smallest hole of at least n bytes and
// walks on to larger holes until one holds a run of n bytes aligned as rig::Space aligns
// (to max(align, the largest power of two not above n)); the run is cut from the low end
// of that hole. So its cost grows with the number of holes it must pass: O(log h) when
// the smallest hole fits, O(h) when many holes are long enough but misaligned.
// Thread-safe: one mutex around everything.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

namespace rig::bench {

class BestFit {
public:
    struct Node {
        std::int64_t address;
        std::int64_t bytes;
    };

    // [base, base + bytes), one hole.
    BestFit(std::int64_t base, std::int64_t bytes);

    // n bytes aligned as rig::alloc aligns them, or nullopt.
    std::optional<Node> alloc(std::int64_t n, std::int64_t align = 4096);
    // Gives back a node alloc returned.
    void free(Node node);

private:
    void add_hole(std::int64_t start, std::int64_t bytes);
    void remove_hole(std::map<std::int64_t, std::int64_t>::iterator hole);

    std::mutex lock_;
    std::map<std::int64_t, std::int64_t> by_address_;          // hole start -> bytes
    std::set<std::pair<std::int64_t, std::int64_t>> by_size_;  // (bytes, start)
};

}  // namespace rig::bench
