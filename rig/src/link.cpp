// PCI Express link speeds, widths and bandwidth (rig/pci/link.hpp). The numbers are the
// PCIe Base 6.0 §4.2 encodings: a lane at 2.5 or 5 GT/s sends 8 bits in 10 (8b/10b), at
// 8, 16 or 32 GT/s 128 in 130 (128b/130b), at 64 GT/s 236 TLP bytes in each 256-byte flit.
#include "rig/pci/link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace rig::pci {
namespace {

struct Rate {
    double gigatransfers;
    std::uint64_t lane_bytes_per_second;
};
// Indexed by generation - 1. Gen3: 8e9 * 128/130 / 8 bytes, rounded down.
constexpr std::array<Rate, 6> rates{{
    {2.5, 250'000'000},
    {5.0, 500'000'000},
    {8.0, 984'615'384},
    {16.0, 1'969'230'769},
    {32.0, 3'938'461'538},
    {64.0, 7'375'000'000},  // 64e9 / 8 * 236 / 256
}};
static_assert(rates[2].lane_bytes_per_second == 8'000'000'000ull * 128 / 130 / 8);
static_assert(rates[3].lane_bytes_per_second == 16'000'000'000ull * 128 / 130 / 8);
static_assert(rates[4].lane_bytes_per_second == 32'000'000'000ull * 128 / 130 / 8);
static_assert(rates[5].lane_bytes_per_second == 64'000'000'000ull / 8 * 236 / 256);

const Rate& rate(Generation g) { return rates.at(static_cast<std::size_t>(g) - 1); }

LinkState lower(const LinkState& a, const LinkState& b) {
    return {std::min(a.speed, b.speed), std::min(a.width, b.width)};
}

}  // namespace

double gigatransfers(Generation g) { return rate(g).gigatransfers; }

std::uint64_t lane_bytes_per_second(Generation g) { return rate(g).lane_bytes_per_second; }

std::uint64_t bytes_per_second(const LinkState& s) { return lane_bytes_per_second(s.speed) * s.width; }

std::optional<Generation> generation_of(std::uint64_t speed_field) {
    if (speed_field < 1 || speed_field > rates.size()) return std::nullopt;
    return static_cast<Generation>(speed_field);
}

std::optional<Generation> parse_sysfs_speed(std::string_view text) {
    // Linux's pci_speed_string(): "2.5 GT/s PCIe" ... "64.0 GT/s PCIe"; kernels before
    // 5.0 wrote "2.5 GT/s", "5 GT/s", "8 GT/s"; an unknown speed is "Unknown".
    std::size_t digits = 0;
    while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
    if (digits == 0 || text.substr(digits).substr(0, 5) != " GT/s") return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + digits, value);
    if (error != std::errc() || end != text.data() + digits) return std::nullopt;
    for (std::size_t i = 0; i < rates.size(); ++i)
        if (value == rates[i].gigatransfers) return static_cast<Generation>(i + 1);
    return std::nullopt;
}

std::optional<LinkState> RouteLink::capable() const {
    if (capability && port_capability) return lower(*capability, *port_capability);
    if (capability) return capability;
    return port_capability;
}

namespace {

// Whether a link at `status` runs below `can`, in speed or in width.
bool below(const LinkState& status, const LinkState& can) {
    return status.speed < can.speed || status.width < can.width;
}

}  // namespace

bool RouteLink::downtrained() const {
    const auto can = capable();
    return status && can && below(*status, *can);
}

std::string to_string(Generation g) { return fmt::format("Gen{}", static_cast<unsigned>(g)); }

std::string to_string(const LinkState& s) { return fmt::format("{} x{}", to_string(s.speed), s.width); }

std::string describe(const Link& link) {
    if (!link.status) return "unknown";
    std::string out = to_string(*link.status);
    if (link.capability && below(*link.status, *link.capability)) out += " (can " + to_string(*link.capability) + ")";
    return out;
}

std::string_view to_string(LinkSource s) {
    switch (s) {
    case LinkSource::Unread: return "unread";
    case LinkSource::Config: return "config";
    case LinkSource::Sysfs: return "sysfs";
    }
    return "unread";
}

}  // namespace rig::pci
