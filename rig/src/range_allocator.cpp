// Top-down first fit over a map of free ranges (range_allocator.hpp).
#include "range_allocator.hpp"

#include <algorithm>
#include <iterator>

namespace rig::pci {

void RangeAllocator::add(std::uint64_t start, std::uint64_t end) {
    if (end > start) free(start, end - start);
}

std::optional<std::uint64_t> RangeAllocator::allocate(std::uint64_t bytes, std::uint64_t alignment,
                                                      std::uint64_t below) {
    if (bytes == 0 || alignment == 0) return std::nullopt;
    for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
        const std::uint64_t start = it->first;
        const std::uint64_t end = std::min(it->second, below);
        if (end <= start || end - start < bytes) continue;
        const std::uint64_t at = (end - bytes) & ~(alignment - 1);
        if (at < start) continue;
        take(at, bytes);
        return at;
    }
    return std::nullopt;
}

bool RangeAllocator::take(std::uint64_t start, std::uint64_t bytes) {
    if (bytes == 0 || start + bytes < start) return false;
    auto it = free_.upper_bound(start);
    if (it == free_.begin()) return false;
    --it;
    const std::uint64_t lo = it->first, hi = it->second;
    if (start + bytes > hi) return false;
    free_.erase(it);
    if (lo < start) free_.emplace(lo, start);
    if (start + bytes < hi) free_.emplace(start + bytes, hi);
    return true;
}

void RangeAllocator::free(std::uint64_t start, std::uint64_t bytes) {
    std::uint64_t lo = start, hi = start + bytes;
    auto next = free_.lower_bound(start);
    if (next != free_.begin()) {
        auto before = std::prev(next);
        if (before->second == lo) {
            lo = before->first;
            free_.erase(before);
        }
    }
    next = free_.lower_bound(hi);
    if (next != free_.end() && next->first == hi) {
        hi = next->second;
        free_.erase(next);
    }
    free_.emplace(lo, hi);
}

std::uint64_t RangeAllocator::free_bytes() const {
    std::uint64_t total = 0;
    for (const auto& [start, end] : free_) total += end - start;
    return total;
}

}  // namespace rig::pci
