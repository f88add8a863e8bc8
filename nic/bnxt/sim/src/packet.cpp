// RoCE packet encoding and decoding (packet.hpp): Ethernet, then IPv4 + UDP, IPv6 + UDP or
// the GRH, BTH and the RC extension headers, big-endian, as IBA vol. 1 §9.2-§9.3 and
// annexes A16 (RoCEv1) and A17 (RoCEv2) lay them out; the pad and the ICRC (§7.8.1).
#include "packet.hpp"

#include <bit>
#include <cstring>

#include "crc32.hpp"

namespace rig::bnxt::sim::detail {
namespace {

constexpr std::uint8_t grh_next_header_bth = 0x1B;  // IBA §8.3.3: the next header is a BTH
constexpr std::uint8_t ip_protocol_udp = 17;
constexpr std::uint8_t ipv4_version_ihl = 0x45;  // version 4, 5 words: no options
constexpr std::uint16_t ipv4_dont_fragment = 0x4000;
constexpr std::uint16_t ipv4_fragment_bits = 0x3FFF;  // MF and the fragment offset
constexpr std::size_t reth_bytes = 16;
constexpr std::size_t aeth_bytes = 4;
constexpr std::size_t imm_bytes = 4;
constexpr std::size_t grh_bytes = ipv6_bytes;
static_assert(max_frame_bytes == 4194);

// Writes headers from the start of a frame whose size is already that of the headers.
class Writer {
public:
    explicit Writer(std::byte* at) : at_(at) {}
    std::byte* at() const { return at_; }
    void u8(std::uint64_t v) { *at_++ = static_cast<std::byte>(v & 0xFF); }
    template <unsigned Bytes>
    void be(std::uint64_t v) {
        for (unsigned i = 0; i < Bytes; ++i) at_[i] = static_cast<std::byte>(v >> (8 * (Bytes - 1 - i)));
        at_ += Bytes;
    }
    void raw(const std::uint8_t* p, std::size_t n) {
        std::memcpy(at_, p, n);
        at_ += n;
    }
    template <std::size_t N>
    void raw(const std::array<std::uint8_t, N>& a) {
        raw(a.data(), N);
    }

private:
    std::byte* at_;
};

class Reader {
public:
    explicit Reader(std::span<const std::byte> in) : in_(in) {}
    bool has(std::size_t n) const { return in_.size() - at_ >= n; }
    std::size_t left() const { return in_.size() - at_; }
    std::size_t at() const { return at_; }
    template <unsigned Bytes>
    std::uint64_t be() {
        std::uint64_t v = 0;
        for (unsigned i = 0; i < Bytes; ++i) v = (v << 8) | std::to_integer<std::uint8_t>(in_[at_ + i]);
        at_ += Bytes;
        return v;
    }
    void raw(std::uint8_t* p, std::size_t n) {
        std::memcpy(p, in_.data() + at_, n);
        at_ += n;
    }
    template <std::size_t N>
    void raw(std::array<std::uint8_t, N>& a) {
        raw(a.data(), N);
    }

private:
    std::span<const std::byte> in_;
    std::size_t at_ = 0;
};

std::uint16_t be16(std::span<const std::byte> b, std::size_t at) {
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(b[at]) << 8 | std::to_integer<unsigned>(b[at + 1]));
}

void store_be16(std::span<std::byte> b, std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::byte>(v >> 8);
    b[at + 1] = static_cast<std::byte>(v & 0xFF);
}

// BTH and the extension headers of an opcode.
std::size_t transport_bytes(RcOpcode op) {
    return bth_bytes + (has_reth(op) ? reth_bytes : 0) + (has_aeth(op) ? aeth_bytes : 0) +
           (has_immediate(op) ? imm_bytes : 0) + unread_header_bytes(op);
}

// The headers between Ethernet and the BTH.
std::size_t network_bytes(Network n) {
    switch (n) {
    case Network::ROCE_V1: return grh_bytes;
    case Network::ROCE_V2_IPV4: return ipv4_bytes + udp_bytes;
    case Network::ROCE_V2_IPV6: return ipv6_bytes + udp_bytes;
    }
    return ipv4_bytes + udp_bytes;
}

std::optional<Network> network_of(std::uint16_t ethertype) {
    switch (ethertype) {
    case ethertype_roce_v1: return Network::ROCE_V1;
    case ethertype_ipv4: return Network::ROCE_V2_IPV4;
    case ethertype_ipv6: return Network::ROCE_V2_IPV6;
    default: return std::nullopt;
    }
}

constexpr std::size_t pad_for(std::size_t payload_bytes) { return (4 - payload_bytes % 4) % 4; }

// GRH and IPv6 share their first 40 bytes' layout (IBA §8.3; RFC 8200 §3).
void write_ipv6_like(Writer& w, const Packet& p, std::size_t payload_length, std::uint8_t next_header) {
    w.be<4>((std::uint64_t{6} << 28) | (std::uint64_t{p.traffic_class} << 20) | (p.flow_label & 0xFFFFF));
    w.be<2>(payload_length);
    w.u8(next_header);
    w.u8(p.hop_limit);
    w.raw(p.sgid);
    w.raw(p.dgid);
}

void write_udp(Writer& w, const Packet& p, std::size_t length) {
    w.be<2>(p.src_port);
    w.be<2>(roce_v2_udp_port);
    w.be<2>(length);
    w.be<2>(0);  // IPv4: none (A17.4.3); IPv6: seal writes it
}

}  // namespace

std::uint64_t ones_sum(std::span<const std::byte> bytes, std::uint64_t sum) {
    // RFC 1071 §2 (B): the sum of 16-bit words in the host's byte order is the byte-swapped
    // sum in network order, so words are added as they lie, eight bytes at a time.
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t n = bytes.size();
    std::uint64_t host = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p + i, 8);
        host += (w & 0xFFFF) + ((w >> 16) & 0xFFFF) + ((w >> 32) & 0xFFFF) + (w >> 48);
    }
    for (; i + 2 <= n; i += 2) {
        std::uint16_t w = 0;
        std::memcpy(&w, p + i, 2);
        host += w;
    }
    if (i < n) {
        const unsigned char last[2] = {p[i], 0};  // padded with zero
        std::uint16_t w = 0;
        std::memcpy(&w, last, 2);
        host += w;
    }
    while (host >> 16) host = (host & 0xFFFF) + (host >> 16);
    std::uint16_t folded = static_cast<std::uint16_t>(host);
    if constexpr (std::endian::native == std::endian::little) folded = std::byteswap(folded);
    return sum + folded;
}

std::uint16_t fold_complement(std::uint64_t sum) {
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum & 0xFFFF);
}

std::uint16_t ipv4_checksum(std::span<const std::byte> header) { return fold_complement(ones_sum(header)); }

std::uint16_t udp_source_port(std::uint32_t flow_label, std::uint32_t qpn, std::uint32_t dest_qpn) {
    std::uint32_t fl = flow_label & 0xFFFFF;
    if (fl == 0) {
        // rdma_calc_flow_label: the product of the QP numbers, folded into 20 bits.
        std::uint64_t v = std::uint64_t{qpn & 0xFFFFFF} * (dest_qpn & 0xFFFFFF);
        v ^= v >> 20;
        v ^= v >> 40;
        fl = static_cast<std::uint32_t>(v & 0xFFFFF);
    }
    // rdma_flow_label_to_udp_sport: the low 14 bits XOR the high 6, in 0xC000-0xFFFF.
    const std::uint32_t low = (fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14);
    return static_cast<std::uint16_t>(low | 0xC000);
}

std::span<std::byte> encode(const Packet& p, std::size_t payload_bytes, Frame& out) {
    const std::size_t transport = transport_bytes(p.opcode);
    const std::size_t pad = pad_for(payload_bytes);
    const std::size_t roce = transport + payload_bytes + pad + icrc_bytes;  // BTH to ICRC
    const std::size_t headers = eth_bytes + network_bytes(p.network) + transport;
    out.resize(headers + payload_bytes + pad + icrc_bytes);
    Writer w(out.data());
    w.raw(p.dst_mac);
    w.raw(p.src_mac);
    switch (p.network) {
    case Network::ROCE_V1:
        w.be<2>(ethertype_roce_v1);
        write_ipv6_like(w, p, roce, grh_next_header_bth);  // PayLen counts the ICRC (§8.3.3)
        break;
    case Network::ROCE_V2_IPV4: {
        w.be<2>(ethertype_ipv4);
        std::byte* ip = w.at();
        w.u8(ipv4_version_ihl);
        w.u8(p.traffic_class);
        w.be<2>(ipv4_bytes + udp_bytes + roce);
        w.be<2>(0);  // identification: an atomic datagram (DF) needs none (RFC 6864 §4.1)
        w.be<2>(ipv4_dont_fragment);
        w.u8(p.hop_limit);
        w.u8(ip_protocol_udp);
        w.be<2>(0);
        w.raw(p.sgid.data() + 12, 4);
        w.raw(p.dgid.data() + 12, 4);
        const std::span header(ip, ipv4_bytes);
        store_be16(header, 10, ipv4_checksum(header));
        write_udp(w, p, udp_bytes + roce);
        break;
    }
    case Network::ROCE_V2_IPV6:
        w.be<2>(ethertype_ipv6);
        write_ipv6_like(w, p, udp_bytes + roce, ip_protocol_udp);
        write_udp(w, p, udp_bytes + roce);
        break;
    }
    // BTH: opcode; SE, MigReq, PadCnt, TVer; P_Key; resv8a, DestQP; AckReq, reserved, PSN.
    w.u8(static_cast<std::uint8_t>(p.opcode));
    w.u8((p.solicited ? 0x80u : 0x00u) | (pad << 4));
    w.be<2>(p.pkey);
    w.be<4>(p.dest_qp & 0xFFFFFF);
    w.be<4>((p.ack_request ? 0x80000000u : 0u) | (p.psn & 0xFFFFFF));
    if (has_reth(p.opcode)) {
        const Reth r = p.reth.value_or(Reth{});
        w.be<8>(r.va);
        w.be<4>(r.rkey);
        w.be<4>(r.length);
    }
    if (has_aeth(p.opcode)) {
        const Aeth a = p.aeth.value_or(Aeth{});
        w.u8((static_cast<unsigned>(a.kind) << 5) | (a.value & 0x1F));
        w.be<3>(a.msn & 0xFFFFFF);
    }
    if (has_immediate(p.opcode)) w.be<4>(p.immediate.value_or(0));
    std::memset(out.data() + headers + payload_bytes, 0, pad);
    return std::span(out).subspan(headers, payload_bytes);
}

std::optional<std::uint32_t> icrc(std::span<std::byte> frame) {
    if (frame.size() < eth_bytes) return std::nullopt;
    const auto network = network_of(be16(frame, 12));
    if (!network) return std::nullopt;
    const std::size_t net = network_bytes(*network);
    if (frame.size() < eth_bytes + net + bth_bytes + icrc_bytes) return std::nullopt;
    // In place, so that one CRC runs over the frame from byte 6 to the ICRC: the 8 bytes
    // before the IP header (source MAC, EtherType) stand for the LRH's ones, the variant
    // fields are ones; all put back after.
    std::array<std::size_t, 8> variant{};
    std::size_t count = 0;
    if (*network == Network::ROCE_V2_IPV4) {
        for (std::size_t at : {eth_bytes + 1, eth_bytes + 8, eth_bytes + 10, eth_bytes + 11}) variant[count++] = at;
    } else {
        for (std::size_t at : {eth_bytes + 1, eth_bytes + 2, eth_bytes + 3, eth_bytes + 7}) variant[count++] = at;
    }
    if (*network != Network::ROCE_V1) {
        variant[count++] = eth_bytes + net - 2;  // UDP checksum
        variant[count++] = eth_bytes + net - 1;
    }
    variant[count++] = eth_bytes + net + 4;  // BTH resv8a
    constexpr std::size_t lrh_from = eth_bytes - 8;
    std::array<std::byte, 8 + 8 + 1> saved;
    std::memcpy(saved.data(), frame.data() + lrh_from, 8);
    std::memset(frame.data() + lrh_from, 0xFF, 8);
    for (std::size_t i = 0; i < count; ++i) {
        saved[8 + i] = frame[variant[i]];
        frame[variant[i]] = std::byte{0xFF};
    }
    saved[16] = frame[eth_bytes];
    if (*network != Network::ROCE_V2_IPV4) frame[eth_bytes] |= std::byte{0x0F};  // traffic class, high half
    const std::uint32_t reg = crc32_update(~0u, frame.subspan(lrh_from, frame.size() - lrh_from - icrc_bytes));
    std::memcpy(frame.data() + lrh_from, saved.data(), 8);
    for (std::size_t i = 0; i < count; ++i) frame[variant[i]] = saved[8 + i];
    frame[eth_bytes] = saved[16];
    return ~reg;
}

void seal(std::span<std::byte> frame) {
    const std::uint32_t c = icrc(frame).value_or(0);
    std::byte* at = frame.data() + frame.size() - icrc_bytes;
    for (unsigned i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(c >> (8 * i));
    if (be16(frame, 12) != ethertype_ipv6) return;
    // RFC 8200 §8.1: the pseudo-header (addresses, upper-layer length, next header), then
    // the UDP header and its payload, the ICRC included.
    const std::span ip = frame.subspan(eth_bytes, ipv6_bytes);
    const std::span udp = frame.subspan(eth_bytes + ipv6_bytes);
    std::uint64_t sum = ones_sum(ip.subspan(8, 32));
    sum += udp.size() + ip_protocol_udp;
    sum = ones_sum(udp, sum);
    const std::uint16_t check = fold_complement(sum);
    store_be16(udp, 6, check == 0 ? 0xFFFF : check);
}

namespace {

// decode's body, into the caller's Packet.
std::optional<Malformed> read_packet(std::span<std::byte> frame, Packet& p) {
    Reader r(frame);
    if (!r.has(eth_bytes)) return Malformed::truncated;
    r.raw(p.dst_mac);
    r.raw(p.src_mac);
    const auto network = network_of(static_cast<std::uint16_t>(r.be<2>()));
    if (!network) return Malformed::not_roce;
    p.network = *network;
    std::size_t roce = 0;  // BTH to ICRC, as the network headers give it
    if (p.network == Network::ROCE_V2_IPV4) {
        if (!r.has(ipv4_bytes)) return Malformed::truncated;
        const auto header = frame.subspan(eth_bytes, ipv4_bytes);
        const auto version_ihl = r.be<1>();
        if ((version_ihl >> 4) != 4) return Malformed::not_roce;
        if ((version_ihl & 0xF) < 5) return Malformed::length;
        if ((version_ihl & 0xF) > 5) return Malformed::not_roce;  // gap: the model takes no IP options
        if (ipv4_checksum(header) != 0) return Malformed::ip_checksum;
        p.traffic_class = static_cast<std::uint8_t>(r.be<1>());
        const std::size_t total = r.be<2>();
        r.be<2>();  // identification
        if (r.be<2>() & ipv4_fragment_bits) return Malformed::not_roce;
        p.hop_limit = static_cast<std::uint8_t>(r.be<1>());
        if (r.be<1>() != ip_protocol_udp) return Malformed::not_roce;
        r.be<2>();  // checksum, checked above
        p.sgid = Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
        p.dgid = p.sgid;
        r.raw(p.sgid.data() + 12, 4);
        r.raw(p.dgid.data() + 12, 4);
        if (total < ipv4_bytes) return Malformed::length;
        if (frame.size() - eth_bytes < total) return Malformed::truncated;
        if (frame.size() - eth_bytes > total) return Malformed::length;
        roce = total - ipv4_bytes;  // UDP onwards, for now
    } else {
        if (!r.has(ipv6_bytes)) return Malformed::truncated;
        const std::uint64_t first = r.be<4>();
        if ((first >> 28) != 6) return Malformed::not_roce;
        p.traffic_class = static_cast<std::uint8_t>(first >> 20);
        p.flow_label = static_cast<std::uint32_t>(first & 0xFFFFF);
        const std::size_t payload_length = r.be<2>();
        const auto next_header = r.be<1>();
        if (next_header != (p.network == Network::ROCE_V1 ? grh_next_header_bth : ip_protocol_udp))
            return Malformed::not_roce;
        p.hop_limit = static_cast<std::uint8_t>(r.be<1>());
        r.raw(p.sgid);
        r.raw(p.dgid);
        if (r.left() < payload_length) return Malformed::truncated;
        if (r.left() > payload_length) return Malformed::length;
        roce = payload_length;
    }
    if (p.network != Network::ROCE_V1) {
        if (!r.has(udp_bytes)) return Malformed::truncated;
        p.src_port = static_cast<std::uint16_t>(r.be<2>());
        const auto port = r.be<2>();
        const std::size_t length = r.be<2>();
        const auto checksum = r.be<2>();
        if (length != roce) return Malformed::length;
        if (port != roce_v2_udp_port) return Malformed::udp_port;
        // RFC 8200 §8.1: over IPv6 the UDP checksum is required, zero invalid, and covers
        // the pseudo-header (addresses, upper-layer length, next header) and the segment;
        // with the field included the sum is all ones. Over IPv4 it may be zero (A17.4.3;
        // rxe sends zero) and the ICRC covers the same bytes.
        if (p.network == Network::ROCE_V2_IPV6) {
            const auto segment = frame.subspan(eth_bytes + ipv6_bytes, roce);
            const std::uint64_t pseudo = ones_sum(frame.subspan(eth_bytes + 8, 32)) + roce + ip_protocol_udp;
            if (checksum == 0 || fold_complement(ones_sum(segment, pseudo)) != 0) return Malformed::udp_checksum;
        }
        roce -= udp_bytes;
    }
    if (roce < bth_bytes + icrc_bytes) return Malformed::truncated;
    const auto tail = frame.subspan(frame.size() - icrc_bytes);
    std::uint32_t carried = 0;
    for (unsigned i = 0; i < 4; ++i) carried |= std::to_integer<std::uint32_t>(tail[i]) << (8 * i);
    if (icrc(frame) != carried) return Malformed::icrc;

    const auto opcode = r.be<1>();
    const auto flags = r.be<1>();
    if ((flags & 0x0F) != 0) return Malformed::not_roce;  // TVer: IBA transport version 0
    if (!is_rc_opcode(static_cast<unsigned>(opcode))) return Malformed::opcode;
    p.opcode = static_cast<RcOpcode>(opcode);
    p.solicited = (flags & 0x80) != 0;
    const std::size_t pad = (flags >> 4) & 0x3;
    p.pkey = static_cast<std::uint16_t>(r.be<2>());
    p.dest_qp = static_cast<std::uint32_t>(r.be<4>() & 0xFFFFFF);
    const std::uint64_t psn_word = r.be<4>();
    p.ack_request = (psn_word & 0x80000000u) != 0;
    p.psn = static_cast<std::uint32_t>(psn_word & 0xFFFFFF);
    const std::size_t transport = transport_bytes(p.opcode);
    if (roce < transport + icrc_bytes) return Malformed::truncated;
    if (has_reth(p.opcode)) {
        Reth h;
        h.va = r.be<8>();
        h.rkey = static_cast<std::uint32_t>(r.be<4>());
        h.length = static_cast<std::uint32_t>(r.be<4>());
        p.reth = h;
    }
    if (has_aeth(p.opcode)) {
        Aeth a;
        const auto syndrome = static_cast<std::uint8_t>(r.be<1>());
        const unsigned kind = syndrome >> 5;
        // Table 44's reserved kinds: a bad packet, dropped before the QP (rxe's check_ack
        // would fail the WQE; the packet is no acknowledgement IBA defines).
        if (kind != 0 && kind != 1 && kind != 3) return Malformed::aeth;
        a.kind = static_cast<AethKind>(kind);
        a.value = syndrome & 0x1F;
        a.msn = static_cast<std::uint32_t>(r.be<3>());
        p.aeth = a;
    }
    if (has_immediate(p.opcode)) p.immediate = static_cast<std::uint32_t>(r.be<4>());
    for (std::size_t i = 0; i < unread_header_bytes(p.opcode); ++i) r.be<1>();
    const std::size_t padded = roce - transport - icrc_bytes;
    if (pad > padded) return Malformed::length;
    p.payload = frame.subspan(r.at(), padded - pad);
    return std::nullopt;
}

}  // namespace

std::expected<Packet, Malformed> decode(std::span<std::byte> frame) {
    // Built in place (one named result, returned by NRVO): copying a Packet out of a
    // local cost more than the rest of decode.
    std::expected<Packet, Malformed> out(std::in_place);
    if (const auto why = read_packet(frame, *out)) out = std::unexpected(*why);
    return out;
}

std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
    std::int32_t d = static_cast<std::int32_t>((a - b) & 0xFFFFFF);
    if (d > 0x800000) d -= 0x1000000;
    return d;
}

}  // namespace rig::bnxt::sim::detail
