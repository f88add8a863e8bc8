// The Ethernet CRC-32 the model's ICRC is made of (nic/bnxt/sim/src/crc32.cpp), through
// testing/frames.hpp: the check value of the CRC catalogue, known values of zlib.crc32,
// and each folding path this CPU has equal to the tables for every length and alignment
// around its 16-, 64- and 512-byte steps.
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
    EXPECT_EQ(testing::crc32(bytes_of("123456789"), testing::Crc32Path::tables), 0xCBF43926u);
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

// One folding path against the tables, for every length to 1100 bytes at four alignments
// and a few long ones.
void expect_path_equals_the_tables(testing::Crc32Path path) {
    const Bytes data = pattern(4096 + 64, 21);
    for (std::size_t offset = 0; offset < 16; offset += 5)
        for (std::size_t n = 0; n <= 1100; ++n) {
            const std::span<const std::byte> s(data.data() + offset, n);
            ASSERT_EQ(testing::crc32(s, path), testing::crc32(s, testing::Crc32Path::tables))
                << "offset " << offset << ", " << n << " bytes";
        }
    for (std::size_t n : {2048u, 4095u, 4096u, 4100u}) {
        const std::span<const std::byte> s(data.data() + 1, n);
        EXPECT_EQ(testing::crc32(s, path), testing::crc32(s, testing::Crc32Path::tables)) << n;
    }
}

// A path this CPU lacks is a skipped test, named, never a pass.
TEST(Crc32, PclmulqdqPathEqualsTheTablesForEveryLengthAndAlignment) {
    if (!testing::crc32(Bytes(1), testing::Crc32Path::pclmulqdq)) GTEST_SKIP() << "this CPU lacks PCLMULQDQ";
    expect_path_equals_the_tables(testing::Crc32Path::pclmulqdq);
}

TEST(Crc32, VpclmulqdqPathEqualsTheTablesForEveryLengthAndAlignment) {
    if (!testing::crc32(Bytes(1), testing::Crc32Path::vpclmulqdq))
        GTEST_SKIP() << "this CPU lacks VPCLMULQDQ with AVX-512";
    expect_path_equals_the_tables(testing::Crc32Path::vpclmulqdq);
}

TEST(Crc32, ThisCpusFastestPathIsTheOneUsed) {
    // x86-64 machines since Westmere have PCLMULQDQ, since Ice Lake VPCLMULQDQ with AVX-512;
    // where one has neither, the tables give the same CRCs (above), only slower.
    const testing::Crc32Path best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq")
                                        ? testing::Crc32Path::vpclmulqdq
                                    : __builtin_cpu_supports("pclmul") ? testing::Crc32Path::pclmulqdq
                                                                       : testing::Crc32Path::tables;
    EXPECT_EQ(testing::crc32_best(), best);
    const Bytes data = pattern(4096, 8);
    EXPECT_EQ(testing::crc32(data), testing::crc32(data, testing::Crc32Path::tables));
}

}  // namespace
}  // namespace rig::bnxt::sim::test
