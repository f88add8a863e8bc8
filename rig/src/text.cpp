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
    // The largest unit that holds n exactly, with at most three decimals: a unit is 2^k
    // bytes, so a remainder is a whole number of thousandths where it is a multiple of
    // 2^k / 8 (1000 = 8 * 125).
    for (std::size_t u = units.size(); u-- > 0;) {
        const std::uint64_t unit = std::uint64_t{1} << (10 * (u + 1));
        const std::uint64_t whole = n / unit, rest = n % unit;
        if (whole == 0 || rest % (unit / 8) != 0) continue;
        if (rest == 0) return fmt::format("{} {}", whole, units[u]);
        std::string thousandths = fmt::format("{:03}", rest / (unit / 8) * 125);
        thousandths.erase(thousandths.find_last_not_of('0') + 1);
        return fmt::format("{}.{} {}", whole, thousandths, units[u]);
    }
    return fmt::format("{} bytes", n);
}

std::string duration(std::chrono::nanoseconds d) {
    const auto ns = static_cast<double>(d.count());
    if (ns < 1e3) return fmt::format("{} ns", d.count());
    if (ns < 1e6) return fmt::format("{:.3g} us", ns / 1e3);
    if (ns < 1e9) return fmt::format("{:.3g} ms", ns / 1e6);
    return fmt::format("{:.3g} s", ns / 1e9);
}

}  // namespace rig::text
