// The spelling of numbers for people (rig/text.hpp), on fmt since GCC 12 has no <format>.
#include "rig/text.hpp"

#include <fmt/format.h>

#include <array>

namespace rig::text {

std::string hex(std::uint64_t value, int digits) {
    return digits > 0 ? fmt::format("0x{:0{}x}", value, digits) : fmt::format("0x{:x}", value);
}

std::string bytes(std::uint64_t n) {
    static constexpr std::array<const char*, 6> units{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n == 1) return "1 byte";
    // Below 1 MiB, KiB only where exact: 4095 bytes is not "4 KiB".
    if (n < 1024 || (n < 1024 * 1024 && n % 1024 != 0)) return fmt::format("{} bytes", n);
    double value = static_cast<double>(n);
    std::size_t unit = 0;
    for (value /= 1024; value >= 1024 && unit + 1 < units.size(); value /= 1024) ++unit;
    if (value == static_cast<double>(static_cast<std::uint64_t>(value))) return fmt::format("{} {}", static_cast<std::uint64_t>(value), units[unit]);
    // {:.3g} would write 1023.5 as "1.02e+03".
    if (value >= 1000) return fmt::format("{:.1f} {}", value, units[unit]);
    return fmt::format("{:.3g} {}", value, units[unit]);
}

std::string duration(std::chrono::nanoseconds d) {
    const auto ns = static_cast<double>(d.count());
    if (ns < 1e3) return fmt::format("{} ns", d.count());
    if (ns < 1e6) return fmt::format("{:.3g} us", ns / 1e3);
    if (ns < 1e9) return fmt::format("{:.3g} ms", ns / 1e6);
    return fmt::format("{:.3g} s", ns / 1e9);
}

}  // namespace rig::text
