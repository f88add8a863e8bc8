// rig/pci/address.hpp: bus addresses, the names of PCI functions on their machine.
//
// A bus address is spelled as Linux spells it, "DDDD:BB:DD.F": domain, bus, device and
// function in lowercase hexadecimal, the domain in at least four digits (Intel VMD
// domains have five: "10000:e1:00.0"), the device at most 0x1f and the function at most 7.
// Nothing else is a bus address: no uppercase, no missing part, no trailing text. The
// library takes Linux's spelling alone; a command line turns a user's into it with
// normalize_address.
//
// The numbers of a DMA (a bus address in the sense of a TLP's address) are DmaAddress,
// in dma.hpp; this file is about the names of functions.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rig::pci {

// A parsed bus address. Ordered as compare_address orders the strings.
struct BusAddress {
    std::uint32_t domain = 0;   // 0 .. 0xffffffff; VMD domains start at 0x10000
    std::uint8_t bus = 0;       // 0 .. 0xff
    std::uint8_t device = 0;    // 0 .. 0x1f
    std::uint8_t function = 0;  // 0 .. 7

    // The bus address at s, or nullopt if s is not exactly one.
    static std::optional<BusAddress> parse(std::string_view s);

    // "0000:41:00.0": lowercase, the domain in at least four digits.
    std::string to_string() const;

    friend auto operator<=>(const BusAddress&, const BusAddress&) = default;
};

// Whether s is a bus address.
bool is_address(std::string_view s);

// A user's spelling of a bus address made Linux's: lowercase, and "0000:" in front of a
// short "BB:DD.F" ("41:00.0", "0000:4A:00.0"); nullopt where the result is not a bus address.
std::optional<std::string> normalize_address(std::string_view user);

// Orders bus addresses by domain, bus, device, then function, each as a number, so that
// "2000:00:00.0" < "10000:00:00.0". Negative, zero or positive as a is before, equal to
// or after b. Throws std::invalid_argument (naming the string) if a or b is not a bus
// address.
int compare_address(std::string_view a, std::string_view b);

}  // namespace rig::pci
