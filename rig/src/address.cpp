// Bus addresses (rig/pci/address.hpp): the one spelling Linux gives a PCI function,
// "DDDD:BB:DD.F" (drivers/pci/probe.c names devices "%04x:%02x:%02x.%d"), parsed strictly.
//
// Each address has exactly one spelling: lowercase hexadecimal, the domain in four digits
// or, above 0xffff, in as many as it needs without a leading zero (VMD: "10000:e1:00.0"),
// the bus and device in two, the function in one. So string equality is address
// equality, and to_string(parse(s)) == s for every bus address s.
#include "rig/pci/address.hpp"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

namespace rig::pci {
namespace {

// The value of one lowercase hexadecimal digit, or -1.
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// The number spelled by `s`, all lowercase hexadecimal digits, or nullopt.
std::optional<std::uint32_t> hex_number(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::uint32_t value = 0;
    for (char c : s) {
        const int digit = hex_digit(c);
        if (digit < 0) return std::nullopt;
        value = value << 4 | static_cast<std::uint32_t>(digit);
    }
    return value;
}

}  // namespace

std::optional<BusAddress> BusAddress::parse(std::string_view s) {
    // The domain is everything before the second-to-last ':'; the rest has a fixed shape
    // "BB:DD.F" of 7 characters.
    constexpr std::size_t tail = 7;
    if (s.size() < 4 + 1 + tail) return std::nullopt;
    const std::string_view domain = s.substr(0, s.size() - tail - 1);
    const std::string_view rest = s.substr(s.size() - tail - 1);
    if (rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return std::nullopt;
    // Four digits, or more without a leading zero; at most 32 bits.
    if (domain.size() > 8 || (domain.size() > 4 && domain[0] == '0')) return std::nullopt;
    const auto d = hex_number(domain);
    const auto bus = hex_number(rest.substr(1, 2));
    const auto device = hex_number(rest.substr(4, 2));
    const auto function = hex_number(rest.substr(7, 1));
    if (!d || !bus || !device || !function) return std::nullopt;
    if (*device > 0x1f || *function > 7) return std::nullopt;
    return BusAddress{*d, static_cast<std::uint8_t>(*bus), static_cast<std::uint8_t>(*device),
                      static_cast<std::uint8_t>(*function)};
}

std::string BusAddress::to_string() const {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

bool is_address(std::string_view s) { return BusAddress::parse(s).has_value(); }

std::optional<std::string> normalize_address(std::string_view user) {
    std::string s(user.size() == 7 ? "0000:" : "");  // "41:00.0"
    for (const char c : user) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!is_address(s)) return std::nullopt;
    return s;
}

int compare_address(std::string_view a, std::string_view b) {
    const auto x = BusAddress::parse(a);
    if (!x) throw std::invalid_argument(fmt::format("compare_address: \"{}\" is not a bus address", a));
    const auto y = BusAddress::parse(b);
    if (!y) throw std::invalid_argument(fmt::format("compare_address: \"{}\" is not a bus address", b));
    if (*x < *y) return -1;
    return *x == *y ? 0 : 1;
}

}  // namespace rig::pci
