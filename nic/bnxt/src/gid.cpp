// The port's GIDs and the rule that picks one (rig/bnxt/gid.hpp; docs/bugs.md B19).
#include "rig/bnxt/gid.hpp"

#include <arpa/inet.h>

#include <cstdio>

namespace rig::bnxt {
namespace {

bool all_zero(const Gid& g, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i)
        if (g[i] != 0) return false;
    return true;
}

Gid with_interface_id(std::uint8_t b0, std::uint8_t b1, const Mac& mac) {
    // RFC 4291 appendix A: the modified EUI-64 of a MAC flips the universal/local bit and
    // puts ff:fe in the middle.
    return Gid{b0,     b1,     0,    0,    0,      0,      0,     0, static_cast<std::uint8_t>(mac[0] ^ 0x02),
               mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
}

// 1 for the best class of address, 2 the next, 3 only with link-local allowed, 0 never.
int rank(const GidEntry& e, LinkLocal link_local) {
    if (e.version != RoceVersion::V2) return 0;
    if (is_routable(e.gid)) return is_ipv4_mapped(e.gid) ? 1 : 2;
    if (link_local == LinkLocal::Allow && is_link_local(e.gid)) return 3;
    return 0;
}

}  // namespace

std::optional<std::size_t> choose_gid(std::span<const GidEntry> table, LinkLocal link_local) {
    std::optional<std::size_t> best;
    int best_rank = 0;
    for (std::size_t i = 0; i < table.size(); ++i) {
        const int r = rank(table[i], link_local);
        if (r != 0 && (best_rank == 0 || r < best_rank)) {
            best = i;
            best_rank = r;
        }
    }
    return best;
}

Gid ipv4_gid(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

bool is_ipv4_mapped(const Gid& g) { return all_zero(g, 0, 10) && g[10] == 0xff && g[11] == 0xff; }

bool is_link_local(const Gid& g) {
    if (is_ipv4_mapped(g)) return g[12] == 169 && g[13] == 254;
    return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

bool is_routable(const Gid& g) {
    if (is_ipv4_mapped(g)) return g[12] != 0 && g[12] != 127 && g[12] < 224 && !is_link_local(g);
    if (all_zero(g, 0, 15) && (g[15] == 0 || g[15] == 1)) return false;  // :: and ::1
    if (g[0] == 0xff) return false;                                      // multicast
    return !is_link_local(g);
}

Gid link_local_gid(const Mac& mac) { return with_interface_id(0xfe, 0x80, mac); }
Gid unique_local_gid(const Mac& mac) { return with_interface_id(0xfd, 0x00, mac); }

std::vector<GidEntry> address_gids(const Mac& mac, const Gid& address) {
    return {{link_local_gid(mac), RoceVersion::V2}, {address, RoceVersion::V2}};
}

std::vector<GidEntry> default_gids(const Mac& mac) {
    const auto x = static_cast<std::uint8_t>(1 + (mac[5] + 253) % 254);
    return address_gids(mac, ipv4_gid(192, 0, 2, x));
}

std::optional<Gid> parse_address(std::string_view text) {
    const std::string s(text);
    std::array<std::uint8_t, 4> v4{};
    if (inet_pton(AF_INET, s.c_str(), v4.data()) == 1) return ipv4_gid(v4[0], v4[1], v4[2], v4[3]);
    Gid g{};
    if (inet_pton(AF_INET6, s.c_str(), g.data()) == 1) return g;
    return std::nullopt;
}

std::string to_string(const Gid& g) {
    char text[64];
    if (is_ipv4_mapped(g)) {
        std::snprintf(text, sizeof text, "::ffff:%u.%u.%u.%u", g[12], g[13], g[14], g[15]);
        return text;
    }
    // RFC 5952: the longest run of two or more zero groups becomes "::".
    unsigned groups[8];
    for (int i = 0; i < 8; ++i) groups[i] = static_cast<unsigned>(g[2 * i] << 8 | g[2 * i + 1]);
    int best = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && groups[j] == 0) ++j;
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j == i ? i + 1 : j;
    }
    std::string out;
    for (int i = 0; i < 8; ++i) {
        if (i == best) {
            out += "::";
            i += best_len - 1;
            continue;
        }
        if (!out.empty() && out.back() != ':') out += ':';
        std::snprintf(text, sizeof text, "%x", groups[i]);
        out += text;
    }
    return out;
}

std::string to_string(const Mac& m) {
    char text[18];
    std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return text;
}

}  // namespace rig::bnxt
