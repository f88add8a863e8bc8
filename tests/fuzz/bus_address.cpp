// libFuzzer harness: bus addresses as users and sysfs spell them (rig/pci/address.hpp).
// Any text: parse, normalize_address and compare_address never crash; what parses prints
// back as Linux spells it and parses again to the same numbers; a normalized spelling is
// an address; compare_address orders the two halves of the input as their numbers do.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rig/pci/address.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using rig::pci::BusAddress;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto a = BusAddress::parse(text)) {
        const std::string printed = a->to_string();
        const auto again = BusAddress::parse(printed);
        if (!again || again->domain != a->domain || again->bus != a->bus || again->device != a->device ||
            again->function != a->function || !rig::pci::is_address(printed))
            __builtin_trap();
    }
    if (const auto n = rig::pci::normalize_address(text))
        if (!BusAddress::parse(*n)) __builtin_trap();
    const std::string_view left = text.substr(0, size / 2), right = text.substr(size / 2);
    const auto l = BusAddress::parse(left), r = BusAddress::parse(right);
    try {
        const int order = rig::pci::compare_address(left, right);
        if (!l || !r) __builtin_trap();  // a non-address must throw
        if ((order < 0) != (*l < *r) || (order == 0) != (*l == *r)) __builtin_trap();
    } catch (const std::invalid_argument&) {
        if (l && r) __builtin_trap();
    }
    return 0;
}
