// The Ethernet CRC-32 the model's ICRC is made of (nic/bnxt/sim/src/crc32.cpp), through
// testing/frames.hpp: the check value of the CRC catalogue, known values of zlib.crc32,
// and the folding path equal to the tables for every length and alignment around its
// 16- and 64-byte steps.
#include <gtest/gtest.h>

#include <string_view>

#include "harness.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {
namespace {

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(Crc32, CheckValueOfCrc32IsoHdlc) {
    // The catalogue's "check" (CRC-32/ISO-HDLC, the one of IEEE 802.3): CRC of "123456789".
    EXPECT_EQ(testing::crc32(bytes_of("123456789")), 0xCBF43926u);
    EXPECT_EQ(testing::crc32_by_tables(bytes_of("123456789")), 0xCBF43926u);
    EXPECT_EQ(testing::crc32({}), 0u);
}

TEST(Crc32, IsNotCrc32c) {
    // CRC-32C (Castagnoli) of the same bytes is 0xE3069283; the ICRC is not that.
    EXPECT_NE(testing::crc32(bytes_of("123456789")), 0xE3069283u);
}

TEST(Crc32, KnownValuesOfLongInputs) {
    // zlib.crc32(bytes(range(256)) * 16) and zlib.crc32(b"\xff" * 8).
    Bytes counting(4096);
    for (std::size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<std::byte>(i);
    EXPECT_EQ(testing::crc32(counting), 0xA2912082u);
    EXPECT_EQ(testing::crc32(Bytes(8, std::byte{0xFF})), 0x2144DF1Cu);
}

TEST(Crc32, FoldingEqualsTheTablesForEveryLengthAndAlignment) {
    const Bytes data = pattern(4096 + 64, 21);
    for (std::size_t offset = 0; offset < 16; offset += 3)
        for (std::size_t n = 0; n <= 600; ++n) {
            const std::span<const std::byte> s(data.data() + offset, n);
            ASSERT_EQ(testing::crc32(s), testing::crc32_by_tables(s)) << "offset " << offset << ", " << n << " bytes";
        }
    for (std::size_t n : {1024u, 4095u, 4096u, 4100u}) {
        const std::span<const std::byte> s(data.data() + 1, n);
        EXPECT_EQ(testing::crc32(s), testing::crc32_by_tables(s)) << n;
    }
}

TEST(Crc32, ThisCpuFolds) {
    // The machines rig runs on (x86-64 since Westmere) have PCLMULQDQ; where one has not,
    // the tables alone give the same CRCs (above), only slower.
    if (!__builtin_cpu_supports("pclmul")) GTEST_SKIP() << "no PCLMULQDQ";
    EXPECT_TRUE(testing::crc32_folds());
}

}  // namespace
}  // namespace rig::bnxt::sim::test
