// rig/text.hpp: the one place that spells numbers for people: hexadecimal, sizes in
// bytes with binary units, and durations. Messages and the command line use these so
// that every "0x1750" and "256 MiB" in rig reads alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace rig::text {

// "0x1750"; with digits > 0, zero-padded to that many hex digits ("0x0004").
std::string hex(std::uint64_t value, int digits = 0);

// Bytes for people, always exact: the largest binary unit that holds them with at most
// three decimals ("256 MiB", "1.5 GiB", "1028 KiB", "1.125 KiB"), else bytes ("1 byte",
// "4095 bytes").
std::string bytes(std::uint64_t n);

// "1.25 ms", "3 s": a duration for a message.
std::string duration(std::chrono::nanoseconds d);

}  // namespace rig::text
