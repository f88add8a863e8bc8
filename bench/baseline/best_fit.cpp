// bench/baseline/best_fit.cpp: drm_mm-style best fit (best_fit.hpp).
#include "best_fit.hpp"

#include <algorithm>
#include <bit>

namespace rig::bench {

BestFit::BestFit(std::int64_t base, std::int64_t bytes) {
    if (bytes > 0) add_hole(base, bytes);
}

std::optional<BestFit::Node> BestFit::alloc(std::int64_t n, std::int64_t align) {
    const auto a = static_cast<std::int64_t>(
        std::max(static_cast<std::uint64_t>(align), std::bit_floor(static_cast<std::uint64_t>(n))));
    std::lock_guard lock(lock_);
    for (auto hole = by_size_.lower_bound({n, 0}); hole != by_size_.end(); ++hole) {
        const auto [bytes, start] = *hole;
        const std::int64_t run = (start + a - 1) & ~(a - 1);
        if (run + n > start + bytes) continue;  // long enough, but not where alignment needs it
        remove_hole(by_address_.find(start));
        if (run > start) add_hole(start, run - start);
        if (run + n < start + bytes) add_hole(run + n, start + bytes - (run + n));
        return Node{run, n};
    }
    return std::nullopt;
}

void BestFit::free(Node node) {
    std::lock_guard lock(lock_);
    std::int64_t start = node.address;
    std::int64_t end = node.address + node.bytes;
    auto above = by_address_.lower_bound(start);
    if (above != by_address_.end() && above->first == end) {
        end += above->second;
        above = std::next(above);
        remove_hole(std::prev(above));
    }
    if (above != by_address_.begin()) {
        auto below = std::prev(above);
        if (below->first + below->second == start) {
            start = below->first;
            remove_hole(below);
        }
    }
    add_hole(start, end - start);
}

void BestFit::add_hole(std::int64_t start, std::int64_t bytes) {
    by_address_.emplace(start, bytes);
    by_size_.emplace(bytes, start);
}

void BestFit::remove_hole(std::map<std::int64_t, std::int64_t>::iterator hole) {
    by_size_.erase({hole->second, hole->first});
    by_address_.erase(hole);
}

}  // namespace rig::bench
