// The address allocator behind IOVAs and the simulator's memory (rig/src/range_allocator.hpp).
#include "range_allocator.hpp"

#include <gtest/gtest.h>

namespace rig::pci {
namespace {

TEST(RangeAllocator, PlacesTopDownBelowTheBound) {
    RangeAllocator a;
    a.add(0x1000, 0x10000);
    EXPECT_EQ(a.allocate(0x1000, 0x1000, ~0ull), 0xf000u);
    EXPECT_EQ(a.allocate(0x1000, 0x1000, ~0ull), 0xe000u);
    EXPECT_EQ(a.allocate(0x2000, 0x1000, 0x8000), 0x6000u);
    EXPECT_EQ(a.free_bytes(), 0xf000u - 0x4000u);
}

TEST(RangeAllocator, HonoursAlignment) {
    RangeAllocator a;
    a.add(0x1000, 0x9000);
    EXPECT_EQ(a.allocate(0x1000, 0x4000, ~0ull), 0x8000u);
    EXPECT_EQ(a.allocate(0x2000, 0x4000, ~0ull), 0x4000u);
    EXPECT_EQ(a.allocate(0x1000, 0x4000, ~0ull),
              std::nullopt);  // 0x1000..0x4000 and 0x6000..0x8000 hold no aligned start
    EXPECT_EQ(a.allocate(0x1000, 0x1000, ~0ull), 0x7000u);
}

TEST(RangeAllocator, NothingFitsBelowABoundUnderTheFreeRanges) {
    RangeAllocator a;
    a.add(0x10000, 0x20000);
    EXPECT_EQ(a.allocate(0x1000, 0x1000, 0x10000), std::nullopt);
    EXPECT_EQ(a.allocate(0x20000, 0x1000, ~0ull), std::nullopt);
    EXPECT_EQ(a.allocate(0, 0x1000, ~0ull), std::nullopt);
}

TEST(RangeAllocator, FreeMergesWithBothNeighbours) {
    RangeAllocator a;
    a.add(0, 0x3000);
    const auto top = a.allocate(0x1000, 0x1000, ~0ull);
    const auto middle = a.allocate(0x1000, 0x1000, ~0ull);
    const auto bottom = a.allocate(0x1000, 0x1000, ~0ull);
    ASSERT_TRUE(top && middle && bottom);
    a.free(*top, 0x1000);
    a.free(*bottom, 0x1000);
    a.free(*middle, 0x1000);
    EXPECT_EQ(a.allocate(0x3000, 0x1000, ~0ull), 0u);  // one range again
}

TEST(RangeAllocator, TakeOnlyWhatIsWhollyFree) {
    RangeAllocator a;
    a.add(0, 0x4000);
    EXPECT_TRUE(a.take(0x1000, 0x1000));
    EXPECT_FALSE(a.take(0x1800, 0x1000));
    EXPECT_FALSE(a.take(0x3000, 0x2000));
    EXPECT_EQ(a.free_bytes(), 0x3000u);
}

}  // namespace
}  // namespace rig::pci
