// space/src/testing.cpp: the test-only seams of rig/space_testing.hpp.
#include "rig/space_testing.hpp"

#include "state.hpp"

#include <stdexcept>
#include <string>

namespace rig {

namespace detail {

struct SpaceAccess {
    static std::unique_ptr<Space> make(std::int64_t base, std::int64_t bytes, testing::SpaceFaults faults) {
        auto with = std::make_shared<Faults>(Faults{std::move(faults)});
        return std::unique_ptr<Space>(new Space(base, bytes, std::move(with)));
    }

    static std::vector<testing::Range> free_ranges(const Space& space) {
        SpaceState* shell = untagged(space.published_.load(std::memory_order_acquire));
        if (shell == nullptr) {
            if (space.length() == 0) return {};
            return {{space.base(), space.length()}};
        }
        std::vector<testing::Range> ranges;
        std::lock_guard lock(shell->lock);
        const Fits& fits = shell->books->fits;
        for (const Block* block = fits.first(); block != nullptr; block = block->after) {
            if (block->after != nullptr &&
                (block->after->before != block || block->after->start != block->start + block->bytes))
                throw std::logic_error("rig::testing::free_ranges: the blocks do not tile the space");
            if (block->holds == 0)
                ranges.push_back({static_cast<std::int64_t>(block->start), static_cast<std::int64_t>(block->bytes)});
        }
        check_lists(fits, ranges.size());
        return ranges;
    }

    // The free lists hold exactly the free blocks, each in its class's list, and the bitmap
    // says which lists are not empty (fits.hpp); std::logic_error if not.
    static void check_lists(const Fits& fits, std::size_t free_blocks) {
        std::size_t listed = 0;
        for (int c = 0; c < 64; ++c) {
            const Block* head = fits.lists_[static_cast<std::size_t>(c)];
            bool agrees = ((fits.nonempty_ >> c & 1) != 0) == (head != nullptr);
            for (const Block* block = head; agrees && block != nullptr; block = block->next) {
                agrees = block->holds == 0 && fits::class_of(block->bytes) == c && ++listed <= free_blocks &&
                         (block == head || block->prev->next == block);
            }
            if (!agrees)
                throw std::logic_error("rig::testing::free_ranges: free list " + std::to_string(c) + " is wrong");
        }
        if (listed != free_blocks) throw std::logic_error("rig::testing::free_ranges: a free block is in no free list");
    }
};

}  // namespace detail

namespace testing {

std::unique_ptr<Space> make_space(std::int64_t base, std::int64_t bytes, SpaceFaults faults) {
    return detail::SpaceAccess::make(base, bytes, std::move(faults));
}

std::vector<Range> free_ranges(const Space& space) { return detail::SpaceAccess::free_ranges(space); }

}  // namespace testing

}  // namespace rig
