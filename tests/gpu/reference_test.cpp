// The host's fill and checksum (rig/gpu/reference.hpp), pinned to values worked out from
// the definitions in rig/gpu/pattern.hpp, so that a change to either shows.
#include "rig/gpu/reference.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

#include "rig/gpu/pattern.hpp"

namespace rig::gpu {
namespace {

std::vector<std::byte> filled(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> bytes(n);
    reference::fill(bytes, seed);
    return bytes;
}

TEST(Reference, FillWritesSplitMix64WordsLittleEndian) {
    const auto bytes = filled(16, 0);
    // SplitMix64 from seed 0 begins 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4.
    const std::array<unsigned, 16> expected{0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2,
                                            0xf4, 0x65, 0xb9, 0xa1, 0x6a, 0x9e, 0x78, 0x6e};
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_EQ(std::to_integer<unsigned>(bytes[i]), expected[i]) << "byte " << i;
}

TEST(Reference, FillCutsTheLastWordAtTheEnd) {
    const auto whole = filled(16, 42);
    const auto cut = filled(11, 42);
    EXPECT_TRUE(std::equal(cut.begin(), cut.end(), whole.begin()));
}

TEST(Reference, ChecksumOfOneWordIsItsTermFinished) {
    std::array<std::byte, 8> bytes{};
    bytes[0] = std::byte{0x01};
    bytes[7] = std::byte{0x80};
    EXPECT_EQ(reference::checksum(bytes), pattern::finish(pattern::term(0x8000000000000001, 0), 8));
}

TEST(Reference, ChecksumCompletesAShortWordWithZeros) {
    const std::array<std::byte, 3> bytes{std::byte{0x11}, std::byte{0x22}, std::byte{0x33}};
    EXPECT_EQ(reference::checksum(bytes), pattern::finish(pattern::term(0x332211, 0), 3));
}

TEST(Reference, ChecksumOfNothingIsZero) { EXPECT_EQ(reference::checksum({}), 0u); }

TEST(Reference, ChecksumChangesWhenTwoWordsSwap) {
    auto bytes = filled(64, 7);
    const std::uint64_t before = reference::checksum(bytes);
    std::swap_ranges(bytes.begin(), bytes.begin() + 8, bytes.begin() + 8);
    EXPECT_NE(reference::checksum(bytes), before);
}

TEST(Reference, ChecksumChangesWithOneBit) {
    auto bytes = filled(4096, 7);
    const std::uint64_t before = reference::checksum(bytes);
    bytes[2049] ^= std::byte{0x10};
    EXPECT_NE(reference::checksum(bytes), before);
}

TEST(Reference, ChecksumChangesWithTrailingZeros) {
    std::vector<std::byte> bytes(8);
    std::vector<std::byte> longer(9);
    EXPECT_NE(reference::checksum(bytes), reference::checksum(longer));
}

TEST(Reference, ChecksumIgnoresWhereTheRangeLies) {
    // The same bytes at an odd address give the same checksum: words count from the range.
    const auto bytes = filled(1000, 3);
    std::vector<std::byte> shifted(1003);
    std::copy(bytes.begin(), bytes.end(), shifted.begin() + 3);
    EXPECT_EQ(reference::checksum(std::span(shifted).subspan(3, 1000)), reference::checksum(bytes));
}

TEST(Reference, FillChecksumIsTheChecksumOfTheFill) {
    for (std::size_t n : {0, 1, 7, 8, 9, 4096, 4099}) {
        EXPECT_EQ(reference::fill_checksum(11, n), reference::checksum(filled(n, 11))) << n << " bytes";
    }
}

TEST(Reference, SeedsGiveDifferentChecksums) {
    EXPECT_NE(reference::fill_checksum(1, 4096), reference::fill_checksum(2, 4096));
}

}  // namespace
}  // namespace rig::gpu
