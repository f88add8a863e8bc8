// tests/space/space_test.cpp: rig::Space's contract (docs/api.md, "Space"), case by case: what
// throws std::invalid_argument and what its message names, where ranges land, and how
// holds, shares, frees and releases give ranges back.
#include "rig/space.hpp"
#include "rig/space_testing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using rig::testing::free_ranges;
using rig::testing::Range;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;

// The free ranges of a space of [0, MiB): all of it, or all but [0, bytes).
const std::vector<Range> all_free{{0, MiB}};
std::vector<Range> all_but_first(std::int64_t bytes) { return {{bytes, MiB - bytes}}; }
constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max();

std::string message_of(auto&& call) {
    try {
        call();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no std::invalid_argument)";
}

TEST(Space, NegativeBaseThrowsNamingIt) {
    EXPECT_THAT(message_of([] { rig::Space space(-1, 4096); }), HasSubstr("base -1"));
}

TEST(Space, NegativeLengthThrowsNamingIt) {
    EXPECT_THAT(message_of([] { rig::Space space(0, -4096); }), HasSubstr("length -4096"));
}

TEST(Space, BasePlusLengthOverflowingThrowsNamingBoth) {
    const std::string message = message_of([] { rig::Space space(max64, 1); });
    EXPECT_THAT(message, HasSubstr("0x7fffffffffffffff"));
    EXPECT_THAT(message, HasSubstr("overflows"));
    EXPECT_THROW(rig::Space(1, max64), std::invalid_argument);
}

TEST(Space, LargestRangesAreAccepted) {
    rig::Space whole(0, max64);
    EXPECT_EQ(whole.base(), 0);
    EXPECT_EQ(whole.length(), max64);
    rig::Space empty_at_top(max64, 0);
    EXPECT_EQ(empty_at_top.base(), max64);
    EXPECT_EQ(empty_at_top.length(), 0);
}

TEST(Space, AllocOfNoAddressesThrowsNamingTheCount) {
    rig::Space space(0, MiB);
    rig::Holder holder;
    EXPECT_THAT(message_of([&] { rig::alloc(space, holder, 0); }), HasSubstr("0 addresses"));
    EXPECT_THAT(message_of([&] { rig::alloc(space, holder, -5); }), HasSubstr("-5 addresses"));
}

TEST(Space, AllocWithAlignmentNotAPositivePowerOfTwoThrowsNamingIt) {
    rig::Space space(0, MiB);
    rig::Holder holder;
    EXPECT_THAT(message_of([&] { rig::alloc(space, holder, 4096, 0); }), HasSubstr("alignment 0"));
    EXPECT_THAT(message_of([&] { rig::alloc(space, holder, 4096, -4096); }), HasSubstr("alignment -4096"));
    EXPECT_THAT(message_of([&] { rig::alloc(space, holder, 4096, 3 * 4096); }), HasSubstr("alignment 12288"));
    EXPECT_EQ(free_ranges(space), all_free);  // nothing was taken
}

TEST(Space, AddressOfADefaultHoldThrows) {
    EXPECT_THAT(message_of([] { rig::address(rig::Hold{}); }), HasSubstr("names no range"));
}

TEST(Space, DefaultHoldFreesNothingAndSharesNothing) {
    rig::Holder holder;
    rig::free(rig::Hold{});
    EXPECT_FALSE(rig::share(holder, rig::Hold{}));
}

TEST(Space, AllocAlignsToTheLargestPowerOfTwoNotAboveN) {
    rig::Space space(0, 64 * MiB);
    rig::Holder holder;
    auto a = rig::alloc(space, holder, 3 * MiB);  // aligned to 2 MiB, not 4 KiB
    ASSERT_TRUE(a);
    EXPECT_EQ(rig::address(*a) % (2 * MiB), 0);
    auto b = rig::alloc(space, holder, 5000, 1);  // to 4 KiB, though 1 was asked
    ASSERT_TRUE(b);
    EXPECT_EQ(rig::address(*b) % 4096, 0);
    auto c = rig::alloc(space, holder, 4096, 1 * MiB);  // to 1 MiB, as asked
    ASSERT_TRUE(c);
    EXPECT_EQ(rig::address(*c) % MiB, 0);
}

TEST(Space, AlignmentIsOfAddressesNotOffsetsFromBase) {
    rig::Space space(12345, 4 * MiB);
    rig::Holder holder;
    auto hold = rig::alloc(space, holder, 64 * KiB);
    ASSERT_TRUE(hold);
    EXPECT_EQ(rig::address(*hold) % (64 * KiB), 0);
    EXPECT_GE(rig::address(*hold), 12345);
    EXPECT_LE(rig::address(*hold) + 64 * KiB, 12345 + 4 * MiB);
}

TEST(Space, AllocSucceedsOnAFreeRangeOfTwiceNPlusAlignment) {
    // 2 * (4096 + 4096) addresses at a base no multiple of 4096.
    rig::Space space(1000, 2 * (4096 + 4096));
    rig::Holder holder;
    auto hold = rig::alloc(space, holder, 4096);
    ASSERT_TRUE(hold);
    EXPECT_EQ(rig::address(*hold), 4096);
}

TEST(Space, SmallRequestsUseTheSixteenAddressFloor) {
    rig::Space space(7, 2 * (16 + 1));  // n = 1, align = 1: max(n, 16) + a = 17
    rig::Holder holder;
    auto hold = rig::alloc(space, holder, 1, 1);
    ASSERT_TRUE(hold);
    EXPECT_GE(rig::address(*hold), 7);
}

TEST(Space, ExactAlignedFitIsTaken) {
    rig::Space space(0, 4096);
    rig::Holder holder;
    auto hold = rig::alloc(space, holder, 4096);
    ASSERT_TRUE(hold);
    EXPECT_EQ(rig::address(*hold), 0);
    EXPECT_TRUE(free_ranges(space).empty());
    EXPECT_FALSE(rig::alloc(space, holder, 1, 1));
}

TEST(Space, AllocLongerThanTheSpaceGivesNothing) {
    rig::Space space(0, MiB);
    rig::Holder holder;
    EXPECT_FALSE(rig::alloc(space, holder, MiB + 1));
}

TEST(Space, EmptySpaceGivesNothing) {
    rig::Space space(4096, 0);
    rig::Holder holder;
    EXPECT_FALSE(rig::alloc(space, holder, 1, 1));
    EXPECT_TRUE(free_ranges(space).empty());
}

TEST(Space, HugeRequestsNearTheTopOfInt64AreSafe) {
    rig::Space space(0, max64);
    rig::Holder holder;
    EXPECT_FALSE(rig::alloc(space, holder, max64, std::int64_t{1} << 62));  // would need 2^63 + 2^62
    auto half = rig::alloc(space, holder, (std::int64_t{1} << 62) + 1, std::int64_t{1} << 62);
    ASSERT_TRUE(half);
    EXPECT_EQ(rig::address(*half), 0);
    rig::release(holder);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, max64}}));
}

// A space of [0, MiB) and three holders, for the tests of holds, shares and releases.
class SpaceHolds : public ::testing::Test {
protected:
    rig::Space space{0, MiB};
    rig::Holder first;
    rig::Holder second;
    rig::Holder third;
};

TEST_F(SpaceHolds, FreeGivesTheRangeBackAndMergesWithItsNeighbours) {
    auto a = rig::alloc(space, first, 64 * KiB);
    auto b = rig::alloc(space, first, 64 * KiB);
    auto c = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(rig::address(*a), 0);
    EXPECT_EQ(rig::address(*b), 64 * KiB);
    EXPECT_EQ(rig::address(*c), 128 * KiB);
    rig::free(*a);
    rig::free(*c);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, 64 * KiB}, {128 * KiB, MiB - 128 * KiB}}));
    rig::free(*b);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, FreeTwiceDoesNothing) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    rig::free(*a);
    auto b = rig::alloc(space, first, 64 * KiB);  // the same range again
    ASSERT_TRUE(b);
    EXPECT_EQ(rig::address(*b), rig::address(*a));
    rig::free(*a);  // stale: must not give back b
    EXPECT_EQ(free_ranges(space), all_but_first(64 * KiB));
    rig::free(*b);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, CopiesOfAHoldNameTheSameHold) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    const rig::Hold copy = *a;
    EXPECT_EQ(rig::address(copy), rig::address(*a));
    rig::free(copy);
    EXPECT_EQ(free_ranges(space), all_free);
    rig::free(*a);  // already given back through the copy
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, SharedRangeGoesBackWithItsLastHold) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    auto shared = rig::share(second, *a);
    ASSERT_TRUE(shared);
    EXPECT_EQ(rig::address(*shared), rig::address(*a));
    rig::free(*a);
    EXPECT_EQ(free_ranges(space), all_but_first(64 * KiB));
    rig::free(*shared);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, ShareByTheSameHolderIsASecondHold) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    auto again = rig::share(first, *a);
    ASSERT_TRUE(again);
    rig::free(*a);
    EXPECT_EQ(free_ranges(space).size(), 1u);
    EXPECT_EQ(free_ranges(space)[0].address, 64 * KiB);
    rig::free(*again);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, ShareOfAGivenBackHoldIsNothingAndHoldsNothing) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    rig::release(first);
    EXPECT_FALSE(rig::share(second, *a));
    EXPECT_EQ(free_ranges(space), all_free);
    rig::release(second);  // holds nothing: nothing changes
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, ShareOfAShareOutlivesTheOriginal) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    auto b = rig::share(second, *a);
    ASSERT_TRUE(b);
    rig::release(first);
    auto c = rig::share(third, *b);
    ASSERT_TRUE(c);
    rig::release(second);
    EXPECT_EQ(free_ranges(space), all_but_first(64 * KiB));
    rig::release(third);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, ReleaseGivesBackEveryHoldOfTheHolderOnly) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(rig::alloc(space, first, 16 * KiB));
    auto kept = rig::alloc(space, second, 16 * KiB);
    ASSERT_TRUE(kept);
    EXPECT_EQ(rig::address(*kept), 5 * 16 * KiB);
    rig::release(first);
    EXPECT_EQ(free_ranges(space), (std::vector<Range>{{0, 5 * 16 * KiB}, {6 * 16 * KiB, MiB - 6 * 16 * KiB}}));
    rig::release(first);  // again: nothing left
    rig::free(*kept);
    EXPECT_EQ(free_ranges(space), all_free);
}

TEST_F(SpaceHolds, FreeAfterReleaseDoesNothing) {
    auto a = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(a);
    rig::release(first);
    auto b = rig::alloc(space, first, 64 * KiB);
    ASSERT_TRUE(b);
    rig::free(*a);
    EXPECT_EQ(free_ranges(space), all_but_first(64 * KiB));
}

TEST(Space, ReleaseCoversEverySpaceTheHolderHolds) {
    rig::Space one(0, MiB);
    rig::Space two(1 << 30, MiB);
    rig::Holder holder;
    ASSERT_TRUE(rig::alloc(one, holder, 4096));
    ASSERT_TRUE(rig::alloc(two, holder, 4096));
    rig::release(holder);
    EXPECT_EQ(free_ranges(one), (std::vector<Range>{{0, MiB}}));
    EXPECT_EQ(free_ranges(two), (std::vector<Range>{{1 << 30, MiB}}));
}

TEST(Space, LastCopyOfAHolderGivesBackItsHolds) {
    rig::Space space(0, MiB);
    std::optional<rig::Hold> hold;
    {
        rig::Holder holder;
        rig::Holder copy = holder;
        hold = rig::alloc(space, copy, 64 * KiB);
        ASSERT_TRUE(hold);
    }
    EXPECT_EQ(free_ranges(space), all_free);
    rig::free(*hold);  // stale: does nothing
    EXPECT_EQ(rig::address(*hold), 0);
}

TEST(Space, HoldsOutliveTheirSpace) {
    auto space = std::make_unique<rig::Space>(0, MiB);
    rig::Holder first;
    rig::Holder second;
    auto a = rig::alloc(*space, first, 64 * KiB);
    ASSERT_TRUE(a);
    space.reset();
    auto b = rig::share(second, *a);
    ASSERT_TRUE(b);
    EXPECT_EQ(rig::address(*b), 0);
    rig::free(*a);
    rig::free(*b);
    EXPECT_FALSE(rig::share(second, *a));
    EXPECT_EQ(rig::address(*a), 0);
}

TEST(Space, AStaleHoldOfADeadSpaceLeavesALaterSpaceAlone) {
    std::optional<rig::Hold> stale;
    {
        rig::Space space(0, MiB);
        rig::Holder holder;
        stale = rig::alloc(space, holder, 64 * KiB);
        ASSERT_TRUE(stale);
    }
    rig::Space later(0, MiB);  // may reuse the dead space's state
    rig::Holder holder;
    auto fresh = rig::alloc(later, holder, 64 * KiB);
    ASSERT_TRUE(fresh);
    rig::free(*stale);
    EXPECT_FALSE(rig::share(holder, *stale));
    EXPECT_EQ(free_ranges(later), all_but_first(64 * KiB));
}

TEST(Space, ConstructingASpaceAllocatesNothing) {
    int allocations = 0;
    auto space = rig::testing::make_space(0, MiB, [&](rig::testing::SpaceStep step) {
        if (step == rig::testing::SpaceStep::allocate) ++allocations;
    });
    EXPECT_EQ(allocations, 0);
    rig::Holder holder;
    EXPECT_FALSE(rig::alloc(*space, holder, 2 * MiB));  // too long: still nothing
    EXPECT_EQ(allocations, 0);
    ASSERT_TRUE(rig::alloc(*space, holder, 4096));
    EXPECT_GT(allocations, 0);
}

}  // namespace
