// space/src/testing.cpp: the test-only seams of rig/space_testing.hpp.
#include "rig/space_testing.hpp"

#include "state.hpp"

namespace rig {

namespace detail {

struct SpaceAccess {
    static std::unique_ptr<Space> make(std::int64_t base, std::int64_t bytes, testing::SpaceFaults faults) {
        auto with = std::make_shared<Faults>(Faults{std::move(faults)});
        return std::unique_ptr<Space>(new Space(base, bytes, std::move(with)));
    }

    static std::vector<testing::Range> free_ranges(const Space& space) {
        SpaceState* shell = space.published_.load(std::memory_order_acquire);
        if (shell == nullptr) {
            if (space.length() == 0) return {};
            return {{space.base(), space.length()}};
        }
        std::vector<testing::Range> ranges;
        std::lock_guard lock(shell->lock);
        for (const Block* block = shell->books->fits.first(); block != nullptr; block = block->after)
            if (block->holds == 0)
                ranges.push_back({static_cast<std::int64_t>(block->start), static_cast<std::int64_t>(block->bytes)});
        return ranges;
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
