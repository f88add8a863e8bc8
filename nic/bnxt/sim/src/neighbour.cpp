// The port's neighbour protocols: ARP (RFC 826) for its IPv4 addresses and IPv6 neighbour
// discovery (RFC 4861) for its IPv6 ones, answered by the port; and the host's side,
// Model::resolve, which asks a peer's MAC and waits for the answer (firmware.hpp
// Neighbours).
//
// The port's addresses are its GIDs (ADD_GID; an IPv4-mapped GID is an IPv4 address), each
// at the MAC ADD_GID gave it, and ModelOptions::address at ModelOptions::mac. It answers:
// - an ARP request (to the broadcast or its MAC; hardware type 1, protocol 0x0800) whose
//   target is one of its IPv4 addresses, with a reply to the requester's MAC;
// - a neighbour solicitation (to its MAC, to the solicited-node multicast MAC of one of
//   its addresses or to all-nodes; hop limit 255, a correct ICMPv6 checksum, code 0) whose
//   target is one of its IPv6 addresses, with a solicited advertisement carrying its MAC
//   (RFC 4861 §7.2.4: to the solicitation's source, or all-nodes where it is ::);
// and takes an ARP reply to its MAC or an advertisement only for an address a lookup
// waits for. It learns nothing else: the RoCE engine uses the MAC the driver gives it.
// Everything else of ARP or ICMPv6 is dropped (RxCounters::not_roce; wrong_mac,
// truncated, bad_length and bad_ip_checksum as for RoCE).
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "impl.hpp"

namespace rig::bnxt::sim {
namespace detail {

namespace {

constexpr std::size_t arp_bytes = 28;  // RFC 826 for Ethernet and IPv4
constexpr std::uint16_t arp_hardware_ethernet = 1;
constexpr std::uint16_t arp_request = 1;
constexpr std::uint16_t arp_reply = 2;
constexpr std::uint8_t ip_protocol_icmpv6 = 58;
constexpr std::uint8_t icmpv6_neighbor_solicitation = 135;
constexpr std::uint8_t icmpv6_neighbor_advertisement = 136;
constexpr std::uint8_t nd_option_source_mac = 1;
constexpr std::uint8_t nd_option_target_mac = 2;
constexpr std::uint8_t nd_hop_limit = 255;  // RFC 4861 §7.1: only from the link itself
constexpr std::uint8_t na_solicited = 0x40;
constexpr std::uint8_t na_override = 0x20;
constexpr std::size_t nd_bytes = 24;        // type, code, checksum, flags, target
constexpr std::size_t nd_option_bytes = 8;  // one link-layer address option

constexpr Mac broadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
constexpr Mac all_nodes_mac{0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
constexpr Gid all_nodes{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};

bool is_ipv4_mapped(const Gid& g) {
    return std::all_of(g.begin(), g.begin() + 10, [](std::uint8_t b) { return b == 0; }) && g[10] == 0xFF &&
           g[11] == 0xFF;
}
bool is_link_local(const Gid& g) { return g[0] == 0xFE && (g[1] & 0xC0) == 0x80; }
bool is_unspecified(const Gid& g) {
    return std::all_of(g.begin(), g.end(), [](std::uint8_t b) { return b == 0; });
}

Gid mapped(const std::uint8_t* ipv4) {
    return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, ipv4[0], ipv4[1], ipv4[2], ipv4[3]};
}

// RFC 4291 §2.7.1: ff02::1:ffXX:XXXX, the last 24 bits of the address; RFC 2464 §7: its MAC.
Gid solicited_node(const Gid& g) { return Gid{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xFF, g[13], g[14], g[15]}; }
Mac multicast_mac(const Gid& g) { return Mac{0x33, 0x33, g[12], g[13], g[14], g[15]}; }

std::uint8_t u8(std::span<const std::byte> b, std::size_t at) { return std::to_integer<std::uint8_t>(b[at]); }
std::uint16_t be16(std::span<const std::byte> b, std::size_t at) {
    return static_cast<std::uint16_t>(u8(b, at) << 8 | u8(b, at + 1));
}
template <std::size_t N>
std::array<std::uint8_t, N> take(std::span<const std::byte> b, std::size_t at) {
    std::array<std::uint8_t, N> a{};
    std::memcpy(a.data(), b.data() + at, N);
    return a;
}

class Out {
public:
    explicit Out(Frame& f) : f_(f) {}
    void u8(unsigned v) { f_.push_back(static_cast<std::byte>(v & 0xFF)); }
    void be16(unsigned v) {
        u8(v >> 8);
        u8(v);
    }
    template <std::size_t N>
    void raw(const std::array<std::uint8_t, N>& a) {
        for (std::uint8_t b : a) u8(b);
    }

private:
    Frame& f_;
};

Frame arp_frame(Frame f, std::uint16_t operation, const Mac& to, const Mac& sender_mac, const std::uint8_t* sender_ip,
                const Mac& target_mac, const std::uint8_t* target_ip) {
    f.clear();
    Out o(f);
    o.raw(to);
    o.raw(sender_mac);
    o.be16(ethertype_arp);
    o.be16(arp_hardware_ethernet);
    o.be16(ethertype_ipv4);
    o.u8(6);
    o.u8(4);
    o.be16(operation);
    o.raw(sender_mac);
    for (int i = 0; i < 4; ++i) o.u8(sender_ip[i]);
    o.raw(target_mac);
    for (int i = 0; i < 4; ++i) o.u8(target_ip[i]);
    return f;
}

// RFC 4443 §2.3: the ICMPv6 checksum over the pseudo-header and the message.
std::uint16_t icmpv6_checksum(const Gid& source, const Gid& destination, std::span<const std::byte> message) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < 16; i += 2)
        sum += (source[i] << 8 | source[i + 1]) + (destination[i] << 8 | destination[i + 1]);
    sum += message.size() + ip_protocol_icmpv6;
    return fold_complement(ones_sum(message, sum));
}

// An ND message (solicitation or advertisement) with one link-layer address option (none
// where `option` is 0), its checksum filled in.
Frame nd_frame(Frame f, const Mac& to, const Mac& from, const Gid& source, const Gid& destination, std::uint8_t type,
               std::uint8_t flags, const Gid& target, std::uint8_t option) {
    f.clear();
    Out o(f);
    o.raw(to);
    o.raw(from);
    o.be16(ethertype_ipv6);
    const std::size_t length = nd_bytes + (option ? nd_option_bytes : 0);
    o.u8(0x60);  // version 6, traffic class 0, flow label 0
    o.u8(0);
    o.be16(0);
    o.be16(static_cast<unsigned>(length));
    o.u8(ip_protocol_icmpv6);
    o.u8(nd_hop_limit);
    o.raw(source);
    o.raw(destination);
    const std::size_t message = f.size();
    o.u8(type);
    o.u8(0);    // code
    o.be16(0);  // checksum, below
    o.u8(flags);
    o.u8(0);
    o.be16(0);
    o.raw(target);
    if (option) {
        o.u8(option);
        o.u8(1);  // in units of 8 bytes
        o.raw(from);
    }
    const std::uint16_t check = icmpv6_checksum(source, destination, std::span(f).subspan(message));
    f[message + 2] = static_cast<std::byte>(check >> 8);
    f[message + 3] = static_cast<std::byte>(check & 0xFF);
    return f;
}

}  // namespace

std::optional<Gid> parse_address(const std::string& text) {
    if (text.empty()) return std::nullopt;
    Gid g{};
    std::array<std::uint8_t, 4> v4{};
    if (inet_pton(AF_INET, text.c_str(), v4.data()) == 1) return mapped(v4.data());
    if (inet_pton(AF_INET6, text.c_str(), g.data()) == 1) return g;
    throw std::invalid_argument("rig::bnxt::sim::ModelOptions::address \"" + text +
                                "\" is neither an IPv4 nor an IPv6 address (numeric, as \"192.0.2.1\" or \"fe80::1\")");
}

std::string address_text(const Gid& gid) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, gid.data(), text, sizeof text);
    return text;
}

void Neighbours::ask(const Gid& address) {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(lookups_.begin(), lookups_.end(), [&](const Lookup& l) { return l.address == address; });
    if (it == lookups_.end()) it = lookups_.insert(lookups_.end(), Lookup{address, std::nullopt, 0});
    ++it->askers;
}

void Neighbours::forget(const Gid& address) {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(lookups_.begin(), lookups_.end(), [&](const Lookup& l) { return l.address == address; });
    if (it != lookups_.end() && --it->askers == 0) lookups_.erase(it);
}

bool Neighbours::answer(const Gid& address, const Mac& mac) {
    {
        std::lock_guard lock(mutex_);
        auto it = std::find_if(lookups_.begin(), lookups_.end(), [&](const Lookup& l) { return l.address == address; });
        if (it == lookups_.end()) return false;
        it->mac = mac;
    }
    answered_.notify_all();
    return true;
}

std::optional<Mac> Neighbours::wait(const Gid& address, Nanoseconds deadline, const ModelClock& clock) {
    std::unique_lock lock(mutex_);
    std::optional<Mac> mac;
    auto answered = [&] {
        auto it = std::find_if(lookups_.begin(), lookups_.end(), [&](const Lookup& l) { return l.address == address; });
        if (it != lookups_.end()) mac = it->mac;
        return mac.has_value();
    };
    while (!answered() && clock.now() < deadline) answered_.wait_for(lock, std::chrono::milliseconds(1));
    return mac;
}

bool Firmware::own_address(const Gid& address) const { return mac_of(address).has_value(); }

std::optional<Mac> Firmware::mac_of(const Gid& address) const {
    for (const auto& g : gids_)
        if (g && g->gid == address) return g->mac;
    if (address_ && *address_ == address) return options_.mac;
    return std::nullopt;
}

Gid Firmware::ipv4_source() const {
    for (const auto& g : gids_)
        if (g && is_ipv4_mapped(g->gid)) return g->gid;
    if (address_ && is_ipv4_mapped(*address_)) return *address_;
    return mapped(std::array<std::uint8_t, 4>{}.data());  // 0.0.0.0: an ARP probe's sender (RFC 5227)
}

Gid Firmware::ipv6_source(const Gid& target) const {
    // RFC 4861 §7.2.2: an address of the interface; a link-local one for a link-local target.
    std::optional<Gid> any;
    auto consider = [&](const Gid& g) {
        if (is_ipv4_mapped(g)) return false;
        if (is_link_local(g) == is_link_local(target)) return true;
        if (!any) any = g;
        return false;
    };
    for (const auto& g : gids_)
        if (g && consider(g->gid)) return g->gid;
    if (address_ && consider(*address_)) return *address_;
    return any.value_or(Gid{});
}

Frame Firmware::neighbour_request(const Gid& target) {
    if (is_ipv4_mapped(target)) {
        const Gid source = ipv4_source();
        return arp_frame(transmitter_.frame(), arp_request, broadcast, options_.mac, source.data() + 12, Mac{},
                         target.data() + 12);
    }
    const Gid source = ipv6_source(target);
    return nd_frame(transmitter_.frame(), multicast_mac(solicited_node(target)), options_.mac, source,
                    solicited_node(target), icmpv6_neighbor_solicitation, 0, target,
                    is_unspecified(source) ? 0 : nd_option_source_mac);
}

bool Firmware::neighbour(std::span<const std::byte> bytes) {
    if (bytes.size() < eth_bytes) {
        drop(&RxCounters::truncated);
        return true;
    }
    const std::uint16_t type = be16(bytes, 12);
    if (type == ethertype_arp) return arp(bytes);
    if (type == ethertype_ipv6 && bytes.size() >= eth_bytes + ipv6_bytes &&
        u8(bytes, eth_bytes + 6) == ip_protocol_icmpv6)
        return icmpv6(bytes);
    return false;
}

bool Firmware::arp(std::span<const std::byte> bytes) {
    const Mac to = take<6>(bytes, 0);
    if (to != broadcast && to != options_.mac &&
        std::none_of(gids_.begin(), gids_.end(), [&](const auto& g) { return g && g->mac == to; })) {
        drop(&RxCounters::wrong_mac);
        return true;
    }
    // A frame may carry Ethernet's padding to 60 bytes after the 28 of ARP.
    if (bytes.size() < eth_bytes + arp_bytes) {
        drop(&RxCounters::truncated);
        return true;
    }
    const auto a = bytes.subspan(eth_bytes);
    if (be16(a, 0) != arp_hardware_ethernet || be16(a, 2) != ethertype_ipv4 || u8(a, 4) != 6 || u8(a, 5) != 4) {
        drop(&RxCounters::not_roce);
        return true;
    }
    const std::uint16_t operation = be16(a, 6);
    const Mac sender_mac = take<6>(a, 8);
    const auto sender_ip = take<4>(a, 14);
    const Mac target_mac = take<6>(a, 18);
    const auto target_ip = take<4>(a, 24);
    if (const auto mine = operation == arp_request ? mac_of(mapped(target_ip.data())) : std::nullopt) {
        ++rx_.arp_requests;
        transmitter_.send(arp_frame(transmitter_.frame(), arp_reply, sender_mac, *mine, target_ip.data(), sender_mac,
                                    sender_ip.data()),
                          Transmitter::To::wire);
        return true;
    }
    if (operation == arp_reply && target_mac == options_.mac &&
        neighbours_.answer(mapped(sender_ip.data()), sender_mac)) {
        ++rx_.neighbor_answers;
        return true;
    }
    drop(&RxCounters::not_roce);
    return true;
}

bool Firmware::icmpv6(std::span<const std::byte> bytes) {
    const Mac to = take<6>(bytes, 0);
    const auto ip = bytes.subspan(eth_bytes);
    const Gid source = take<16>(ip, 8);
    const Gid destination = take<16>(ip, 24);
    const bool for_port =
        to == options_.mac || to == all_nodes_mac ||
        std::any_of(gids_.begin(), gids_.end(), [&](const auto& g) { return g && g->mac == to; }) ||
        std::any_of(gids_.begin(), gids_.end(),
                    [&](const auto& g) {
                        return g && !is_ipv4_mapped(g->gid) && multicast_mac(solicited_node(g->gid)) == to;
                    }) ||
        (address_ && multicast_mac(solicited_node(*address_)) == to);
    if (!for_port) {
        drop(&RxCounters::wrong_mac);
        return true;
    }
    const std::size_t length = be16(ip, 4);
    if (ip.size() - ipv6_bytes < length) {
        drop(&RxCounters::truncated);
        return true;
    }
    if (ip.size() - ipv6_bytes > length) {
        drop(&RxCounters::bad_length);
        return true;
    }
    const auto message = ip.subspan(ipv6_bytes);
    if (length < nd_bytes || icmpv6_checksum(source, destination, message) != 0) {
        drop(length < nd_bytes ? &RxCounters::truncated : &RxCounters::bad_ip_checksum);
        return true;
    }
    const std::uint8_t kind = u8(message, 0);
    const Gid target = take<16>(message, 8);
    if (u8(ip, 7) != nd_hop_limit || u8(message, 1) != 0 || target[0] == 0xFF || is_ipv4_mapped(target)) {
        drop(&RxCounters::not_roce);
        return true;
    }
    // The first link-layer address option of `option_type`, if the message has one.
    auto option_mac = [&](std::uint8_t option_type) -> std::optional<Mac> {
        for (std::size_t at = nd_bytes; at + 2 <= message.size();) {
            const std::size_t bytes_of_option = std::size_t{u8(message, at + 1)} * 8;
            if (bytes_of_option == 0 || at + bytes_of_option > message.size()) return std::nullopt;
            if (u8(message, at) == option_type && bytes_of_option >= 8) return take<6>(message, at + 2);
            at += bytes_of_option;
        }
        return std::nullopt;
    };
    if (const auto mine = kind == icmpv6_neighbor_solicitation ? mac_of(target) : std::nullopt) {
        ++rx_.neighbor_solicitations;
        const bool from_unspecified = is_unspecified(source);
        const Mac reply_to =
            from_unspecified ? all_nodes_mac : option_mac(nd_option_source_mac).value_or(take<6>(bytes, 6));
        transmitter_.send(
            nd_frame(transmitter_.frame(), reply_to, *mine, target, from_unspecified ? all_nodes : source,
                     icmpv6_neighbor_advertisement, from_unspecified ? na_override : na_solicited | na_override, target,
                     nd_option_target_mac),
            Transmitter::To::wire);
        return true;
    }
    if (kind == icmpv6_neighbor_advertisement &&
        neighbours_.answer(target, option_mac(nd_option_target_mac).value_or(take<6>(bytes, 6)))) {
        ++rx_.neighbor_answers;
        return true;
    }
    drop(&RxCounters::not_roce);
    return true;
}

}  // namespace detail

rig::Result<detail::Mac> Model::Impl::resolve(const detail::Gid& gid, std::chrono::milliseconds timeout) {
    const bool arp = gid[10] == 0xFF && gid[11] == 0xFF &&
                     std::all_of(gid.begin(), gid.begin() + 10, [](std::uint8_t b) { return b == 0; });
    {
        std::lock_guard step_lock(step_mutex);
        if (firmware.own_address(gid)) return options.mac;
    }
    unsigned end = 0;
    if (!plugged(end)) return rig::fail("bnxt model: resolve ", detail::address_text(gid), ": the port is on no cable");
    neighbours.ask(gid);
    const detail::Nanoseconds start = clock.now();
    const detail::Nanoseconds span = timeout;
    constexpr int tries = 3;
    for (int i = 1; i <= tries; ++i) {
        {
            std::lock_guard step_lock(step_mutex);
            send(firmware.neighbour_request(gid), To::wire);
            flush();
        }
        if (auto mac = neighbours.wait(gid, start + span * i / tries, clock)) {
            neighbours.forget(gid);
            return *mac;
        }
    }
    neighbours.forget(gid);
    return rig::fail("bnxt model: resolve ", detail::address_text(gid), ": no answer to ", std::to_string(tries),
                     arp ? " ARP requests" : " neighbour solicitations", " within ", std::to_string(timeout.count()),
                     " ms");
}

}  // namespace rig::bnxt::sim
