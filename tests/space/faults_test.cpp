// tests/space/faults_test.cpp: exceptions in the middle of rig::Space's work, injected
// through the test-only seam of rig/space_testing.hpp: std::bad_alloc at each heap
// allocation alloc and share make, after the step that gives the holder its hold, and
// between two holds of a release. Nothing leaks, and each call's steps stay whole.
#include "rig/space.hpp"
#include "rig/space_testing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <vector>

namespace {

using rig::testing::free_ranges;
using rig::testing::Range;
using rig::testing::SpaceStep;

constexpr std::int64_t MiB = 1024 * 1024;

// The free ranges of a space of [0, MiB): all of it, or all but [0, bytes).
const std::vector<Range> all_free{{0, MiB}};
std::vector<Range> all_but_first(std::int64_t bytes) { return {{bytes, MiB - bytes}}; }

// Throws std::bad_alloc at the `nth` (from 0) occurrence of `step` once armed; counts
// every step it sees. One per test: no state is shared between tests.
struct Fault {
    SpaceStep step = SpaceStep::allocate;
    int nth = -1;  // disarmed
    int seen = 0;
    int thrown = 0;

    rig::testing::SpaceFaults hook() {
        return [this](SpaceStep at) {
            if (at != step || nth < 0) return;
            if (seen++ == nth) {
                ++thrown;
                nth = -1;
                throw std::bad_alloc();
            }
        };
    }
    void arm(SpaceStep at, int occurrence) {
        step = at;
        nth = occurrence;
        seen = 0;
    }
};

// A space of [0, MiB) with a fault to arm, and two holders.
class SpaceFaults : public ::testing::Test {
protected:
    Fault fault;
    std::unique_ptr<rig::Space> space = rig::testing::make_space(0, MiB, fault.hook());
    rig::Holder first;
    rig::Holder second;
};

TEST(SpaceFaultsFirstAlloc, BadAllocAtAnyAllocationTakesNothing) {
    int points = 0;
    for (int nth = 0;; ++nth) {
        Fault fault;
        auto space = rig::testing::make_space(0, MiB, fault.hook());
        rig::Holder holder;
        fault.arm(SpaceStep::allocate, nth);
        std::optional<rig::Hold> hold;
        try {
            hold = rig::alloc(*space, holder, 4096);
        } catch (const std::bad_alloc&) {
            ++points;
            EXPECT_EQ(free_ranges(*space), all_free) << "allocation " << nth;
            hold = rig::alloc(*space, holder, 4096);  // disarmed now: works
            ASSERT_TRUE(hold);
            rig::release(holder);
            EXPECT_EQ(free_ranges(*space), all_free) << "allocation " << nth;
            continue;
        }
        ASSERT_TRUE(hold);
        EXPECT_EQ(fault.thrown, 0);
        break;
    }
    // The space's state (unless a dead one is reused), its first blocks, the holder's
    // membership: at least three heap allocations, each survived.
    EXPECT_GE(points, 3);
}

TEST(SpaceFaultsGrowth, BadAllocGrowingThePoolTakesNothing) {
    Fault fault;
    auto space = rig::testing::make_space(0, 1024 * MiB, fault.hook());
    rig::Holder holder;
    std::vector<rig::Hold> holds;
    // Enough holds to outgrow the first chunks of nodes: each alloc is tried
    // first with a fault at its first heap allocation (if it makes one), then without.
    int faulted = 0;
    while (holds.size() < 300) {
        fault.arm(SpaceStep::allocate, 0);
        const auto before = free_ranges(*space);
        try {
            auto hold = rig::alloc(*space, holder, 4096);
            ASSERT_TRUE(hold);
            holds.push_back(*hold);
            continue;
        } catch (const std::bad_alloc&) {
            ++faulted;
            EXPECT_EQ(free_ranges(*space), before);
        }
        auto hold = rig::alloc(*space, holder, 4096);
        ASSERT_TRUE(hold);
        holds.push_back(*hold);
    }
    EXPECT_GE(faulted, 4);  // the first alloc's state, its membership, then chunks of nodes
    rig::release(holder);
    EXPECT_EQ(free_ranges(*space), (std::vector<Range>{{0, 1024 * MiB}}));
}

TEST_F(SpaceFaults, BadAllocAfterAllocTookLeavesTheRangeToRelease) {
    fault.arm(SpaceStep::took, 0);
    EXPECT_THROW(rig::alloc(*space, first, 64 * 1024), std::bad_alloc);
    EXPECT_EQ(free_ranges(*space), all_but_first(64 * 1024));  // taken, held
    rig::release(first);
    EXPECT_EQ(free_ranges(*space), all_free);
}

TEST_F(SpaceFaults, BadAllocAfterShareTookLeavesTheHoldToRelease) {
    auto hold = rig::alloc(*space, first, 64 * 1024);
    ASSERT_TRUE(hold);
    fault.arm(SpaceStep::took, 0);
    EXPECT_THROW(rig::share(second, *hold), std::bad_alloc);
    rig::release(first);
    EXPECT_EQ(free_ranges(*space), all_but_first(64 * 1024));  // second holds it
    rig::release(second);
    EXPECT_EQ(free_ranges(*space), all_free);
}

TEST_F(SpaceFaults, BadAllocJoiningASecondHolderInShareHoldsNothing) {
    auto hold = rig::alloc(*space, first, 64 * 1024);
    ASSERT_TRUE(hold);
    fault.arm(SpaceStep::allocate, 0);  // second's membership in the space
    EXPECT_THROW(rig::share(second, *hold), std::bad_alloc);
    EXPECT_EQ(fault.thrown, 1);
    rig::release(first);
    EXPECT_EQ(free_ranges(*space), all_free);
}

TEST_F(SpaceFaults, BadAllocInTheMiddleOfReleaseLeavesTheRestToTheNextRelease) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(rig::alloc(*space, first, 64 * 1024));
    fault.arm(SpaceStep::gave_back, 1);  // after the second hold went back
    EXPECT_THROW(rig::release(first), std::bad_alloc);
    std::int64_t free_bytes = 0;
    for (const Range& range : free_ranges(*space)) free_bytes += range.bytes;
    EXPECT_EQ(free_bytes, MiB - 3 * 64 * 1024);  // two given back, three still held
    rig::release(first);
    EXPECT_EQ(free_ranges(*space), all_free);
}

TEST_F(SpaceFaults, BadAllocAtEveryStepOfReleaseStillEndsWithAllGivenBack) {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(rig::alloc(*space, first, 16 * 1024));
    int interrupted = 0;
    for (;;) {
        fault.arm(SpaceStep::gave_back, 0);
        try {
            rig::release(first);
            break;
        } catch (const std::bad_alloc&) {
            ++interrupted;
        }
    }
    EXPECT_EQ(interrupted, 8);  // one hold per release, eight releases, then an empty one
    EXPECT_EQ(free_ranges(*space), all_free);
}

TEST_F(SpaceFaults, HolderGoingAwayGivesBackWithoutCallingFaults) {
    {
        rig::Holder holder;
        for (int i = 0; i < 3; ++i) ASSERT_TRUE(rig::alloc(*space, holder, 16 * 1024));
        fault.arm(SpaceStep::gave_back, 0);  // a destructor must not throw
    }
    EXPECT_EQ(fault.thrown, 0);
    EXPECT_EQ(free_ranges(*space), all_free);
}

}  // namespace
