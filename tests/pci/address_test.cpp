// Bus addresses: parsing, spelling and bus order (rig/pci/address.hpp).
#include "rig/pci/address.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace rig::pci {
namespace {

TEST(BusAddress, ParsesFourNumbers) {
    const auto a = BusAddress::parse("0000:41:1f.7");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->domain, 0u);
    EXPECT_EQ(a->bus, 0x41);
    EXPECT_EQ(a->device, 0x1f);
    EXPECT_EQ(a->function, 7);
}

TEST(BusAddress, ParsesFiveDigitVmdDomain) {
    const auto a = BusAddress::parse("10000:e1:00.0");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->domain, 0x10000u);
    EXPECT_EQ(a->bus, 0xe1);
}

TEST(BusAddress, NormalizeAddressTakesAUsersSpellings) {
    EXPECT_EQ(normalize_address("41:00.0"), "0000:41:00.0");
    EXPECT_EQ(normalize_address("0000:4A:1F.7"), "0000:4a:1f.7");
    EXPECT_EQ(normalize_address("10000:E1:00.0"), "10000:e1:00.0");
    EXPECT_EQ(normalize_address("garbage"), std::nullopt);
    EXPECT_EQ(normalize_address("41:00.0 "), std::nullopt);
}

TEST(BusAddress, ToStringSpellsAsLinux) {
    EXPECT_EQ((BusAddress{0, 0x41, 0, 0}.to_string()), "0000:41:00.0");
    EXPECT_EQ((BusAddress{0x10000, 0xe1, 0x1f, 7}.to_string()), "10000:e1:1f.7");
    EXPECT_EQ((BusAddress{0xb67c, 0, 2, 0}.to_string()), "b67c:00:02.0");
}

TEST(BusAddress, ParseOfToStringRoundTrips) {
    for (const char* s : {"0000:00:00.0", "ffff:ff:1f.7", "10000:e0:06.0", "ffffffff:00:00.0", "0103:00:00.0"}) {
        const auto a = BusAddress::parse(s);
        ASSERT_TRUE(a) << s;
        EXPECT_EQ(a->to_string(), s);
    }
}

TEST(BusAddress, MalformedFormsAreNotAddresses) {
    const std::vector<std::string> bad = {
        "",                   // empty
        "0000:41:00.0 ",      // trailing text
        "0000:41:00.0\n",     // trailing newline
        " 0000:41:00.0",      // leading text
        "0000:41:00.0.1",     // trailing text
        "0000:41:00.00",      // function in two digits
        "0000:4A:00.0",       // uppercase bus
        "0000:41:0A.0",       // uppercase device
        "ABCD:41:00.0",       // uppercase domain
        "41:00.0",            // no domain
        "000:41:00.0",        // domain of three digits
        "00000:41:00.0",      // five digits with a leading zero
        "100000000:00:00.0",  // domain above 32 bits
        "0000:41:00",         // no function
        "0000:41.0",          // no device
        "0000:4:00.0",        // bus of one digit
        "0000:041:00.0",      // bus of three digits
        "0000:41:20.0",       // device 0x20
        "0000:41:00.8",       // function 8
        "0000-41-00.0",       // wrong separators
        "0000:41:00:0",
        "0000:4g:00.0",  // not hexadecimal
        "0x00:41:00.0",
    };
    for (const auto& s : bad) {
        EXPECT_FALSE(BusAddress::parse(s)) << '"' << s << '"';
        EXPECT_FALSE(is_address(s)) << '"' << s << '"';
    }
}

TEST(BusAddress, GoodFormsAreAddresses) {
    for (const char* s : {"0000:00:00.0", "0000:ff:1f.7", "10000:e1:00.0", "abcd:00:02.0"})
        EXPECT_TRUE(is_address(s)) << s;
}

TEST(CompareAddress, OrdersPoolByNumbersNotText) {
    std::vector<std::string> pool = {"10000:00:00.0", "2000:00:00.0", "0000:41:00.0",  "0000:05:00.0",
                                     "0000:05:00.1",  "0000:05:1f.0", "0001:00:00.0",  "10000:e1:00.0",
                                     "0000:05:02.0",  "ffff:ff:1f.7", "20000:00:00.0", "0000:40:00.0"};
    std::sort(pool.begin(), pool.end(), [](const auto& a, const auto& b) { return compare_address(a, b) < 0; });
    const std::vector<std::string> expected = {"0000:05:00.0", "0000:05:00.1",  "0000:05:02.0",  "0000:05:1f.0",
                                               "0000:40:00.0", "0000:41:00.0",  "0001:00:00.0",  "2000:00:00.0",
                                               "ffff:ff:1f.7", "10000:00:00.0", "10000:e1:00.0", "20000:00:00.0"};
    EXPECT_EQ(pool, expected);
}

TEST(CompareAddress, FiveDigitDomainAfterFourDigitOne) {
    EXPECT_LT(compare_address("2000:00:00.0", "10000:00:00.0"), 0);
    EXPECT_GT(compare_address("10000:00:00.0", "2000:00:00.0"), 0);
    EXPECT_EQ(compare_address("10000:00:00.0", "10000:00:00.0"), 0);
}

TEST(CompareAddress, OrdersDomainThenBusThenDeviceThenFunction) {
    EXPECT_LT(compare_address("0000:ff:1f.7", "0001:00:00.0"), 0);
    EXPECT_LT(compare_address("0000:01:1f.7", "0000:02:00.0"), 0);
    EXPECT_LT(compare_address("0000:01:01.7", "0000:01:02.0"), 0);
    EXPECT_LT(compare_address("0000:01:01.0", "0000:01:01.1"), 0);
}

TEST(CompareAddress, NonAddressThrowsNamingIt) {
    try {
        compare_address("0000:41:00.0", "41:00.0");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("\"41:00.0\""), std::string::npos) << e.what();
    }
    EXPECT_THROW(compare_address("", "0000:41:00.0"), std::invalid_argument);
    EXPECT_THROW(compare_address("0000:41:00.0", "0000:41:00.8"), std::invalid_argument);
}

}  // namespace
}  // namespace rig::pci
