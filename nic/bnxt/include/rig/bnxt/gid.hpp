// rig/bnxt/gid.hpp: the port's addresses on the wire: its MAC, its GIDs, and the rule that
// picks the GID a queue pair speaks from (docs/bugs.md B19).
//
// A GID is 16 bytes in wire order (byte 0 first), an IPv6 address: for RoCEv2 over IPv4
// the IPv4-mapped address ::ffff:a.b.c.d (docs/hsi.md §4.6.5). A user-space driver
// has no network interface whose addresses would fill a GID table, so the caller passes
// the port's address (Options::address, address_gids) or its whole table (Options::gids);
// without them the driver makes the table of default_gids, whose address is one reserved
// for documentation, nobody's.
//
// The rule (choose_gid), first match wins:
//   1. a RoCEv2 entry whose address is IPv4-mapped and routable;
//   2. a RoCEv2 entry whose IPv6 address is routable (global or unique-local fc00::/7);
//   3. only with LinkLocal::Allow: a RoCEv2 link-local entry (fe80::/10, 169.254/16).
// RoCEv1 entries are never chosen, and neither are the unspecified address, loopback or
// multicast. B19's table {0: fe80::… v1, 1: fe80::… v2, 2: fd93::1 v1, 3: fd93::1 v2} gives 3;
// picking index 0 (link-local) there made every operation fail with a retry error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rig::bnxt {

using Gid = std::array<std::uint8_t, 16>;  // wire order
using Mac = std::array<std::uint8_t, 6>;   // wire order

enum class RoceVersion : std::uint8_t { V1, V2 };

struct GidEntry {
    Gid gid{};
    RoceVersion version = RoceVersion::V2;
    friend bool operator==(const GidEntry&, const GidEntry&) = default;
};

enum class LinkLocal { Refuse, Allow };

// The index in `table` of the GID to use, by the rule above; nullopt if none qualifies.
std::optional<std::size_t> choose_gid(std::span<const GidEntry> table, LinkLocal link_local = LinkLocal::Refuse);

// ::ffff:a.b.c.d.
Gid ipv4_gid(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d);
bool is_ipv4_mapped(const Gid& gid);
bool is_link_local(const Gid& gid);  // fe80::/10, or IPv4-mapped 169.254.0.0/16
// Neither unspecified, loopback, multicast nor link-local (IPv4-mapped: not 0/8, 127/8,
// 169.254/16, 224/4 or above).
bool is_routable(const Gid& gid);

// fe80::/64 with the MAC's modified EUI-64 interface identifier (RFC 4291 appendix A).
Gid link_local_gid(const Mac& mac);
// fd00::/64 with the same interface identifier: a unique-local address of the simulated
// site, routable inside it.
Gid unique_local_gid(const Mac& mac);
// {0: link-local v2, 1: `address` v2}: a port with one IP address, as Linux's rxe lays out
// its GID table (tests/interop/fixtures).
std::vector<GidEntry> address_gids(const Mac& mac, const Gid& address);
// address_gids(mac, ::ffff:192.0.2.x): TEST-NET-1 (RFC 5737), reserved for documentation,
// x the MAC's last byte where that is 1..254 (0 gives 254, 255 gives 1), so that ports of
// one simulated site differ. What Nic::open uses where neither Options::address nor
// Options::gids is given.
std::vector<GidEntry> default_gids(const Mac& mac);
// "10.0.0.1" as ::ffff:10.0.0.1, "2001:db8::1" as itself (numeric, inet_pton); nullopt
// for any other text.
std::optional<Gid> parse_address(std::string_view text);

// "fd00::211:22ff:fe33:4455", "::ffff:10.0.0.1": the address for a message.
std::string to_string(const Gid& gid);
// "00:11:22:33:44:55".
std::string to_string(const Mac& mac);

}  // namespace rig::bnxt
