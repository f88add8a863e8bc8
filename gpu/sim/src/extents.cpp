// Free VRAM extents (extents.hpp): first fit, else gathered in address order; a given-back
// extent merges with the free ones it touches.
#include "extents.hpp"

#include <algorithm>
#include <iterator>

namespace rig::gpu::sim {

Extents::Extents(std::uint64_t bytes) : free_bytes_(bytes) {
    if (bytes != 0) free_[0] = bytes;
}

std::optional<std::vector<Extent>> Extents::take(std::uint64_t bytes) {
    if (bytes > free_bytes_) return std::nullopt;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < bytes) continue;
        const Extent taken{it->first, bytes};
        if (it->second > bytes) free_[it->first + bytes] = it->second - bytes;
        free_.erase(it);
        free_bytes_ -= bytes;
        return std::vector<Extent>{taken};
    }
    std::vector<Extent> taken;
    std::uint64_t left = bytes;
    for (auto it = free_.begin(); left > 0;) {
        const std::uint64_t n = it->second < left ? it->second : left;
        taken.push_back({it->first, n});
        if (n < it->second) free_[it->first + n] = it->second - n;
        it = free_.erase(it);
        left -= n;
    }
    free_bytes_ -= bytes;
    return taken;
}

std::uint64_t Extents::free_below(std::uint64_t limit) const {
    std::uint64_t n = 0;
    for (const auto& [offset, bytes] : free_) {
        if (offset >= limit) break;
        n += std::min(bytes, limit - offset);
    }
    return n;
}

void Extents::give(const std::vector<Extent>& extents) {
    for (const Extent& e : extents) {
        auto it = free_.emplace(e.offset, e.bytes).first;
        free_bytes_ += e.bytes;
        if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
            it->second += next->second;
            free_.erase(next);
        }
        if (it != free_.begin()) {
            auto before = std::prev(it);
            if (before->first + before->second == it->first) {
                before->second += it->second;
                free_.erase(it);
            }
        }
    }
}

}  // namespace rig::gpu::sim
