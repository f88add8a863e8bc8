// Numbers spelled for people (rig/text.hpp): sizes exact, never rounded.
#include "rig/text.hpp"

#include <gtest/gtest.h>

namespace rig::text {
namespace {

TEST(TextBytes, ExactBelowOneMiB) {
    EXPECT_EQ(bytes(0), "0 bytes");
    EXPECT_EQ(bytes(1), "1 byte");
    EXPECT_EQ(bytes(1023), "1023 bytes");
    EXPECT_EQ(bytes(4095), "4095 bytes");
    EXPECT_EQ(bytes(4096), "4 KiB");
    EXPECT_EQ(bytes(5000), "5000 bytes");
    EXPECT_EQ(bytes(1024 * 1024 - 1), "1048575 bytes");
}

TEST(TextBytes, TheLargestUnitThatHoldsThemExactly) {
    EXPECT_EQ(bytes(std::uint64_t{256} << 20), "256 MiB");
    EXPECT_EQ(bytes(std::uint64_t{3} << 29), "1.5 GiB");
    EXPECT_EQ(bytes(std::uint64_t{1} << 40), "1 TiB");
    EXPECT_EQ(bytes(1152), "1.125 KiB");
    EXPECT_EQ(bytes((std::uint64_t{1} << 20) + 4096), "1028 KiB");  // not "1 MiB"
    EXPECT_EQ(bytes((std::uint64_t{1} << 20) + 1), "1048577 bytes");
    EXPECT_EQ(bytes(std::uint64_t{2047} << 19), "1023.5 MiB");  // not "1.02e+03 MiB", not "1024 MiB"
    EXPECT_EQ(bytes(~std::uint64_t{0}), "18446744073709551615 bytes");
    EXPECT_EQ(bytes(std::uint64_t{1} << 63), "8 EiB");
}

}  // namespace
}  // namespace rig::text
