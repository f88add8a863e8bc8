// packet.hpp: the RoCE packets a bnxt model's port sends and takes, as Ethernet frames.
//
// Framing, by the QP's network type (MODIFY_QP's network_type, Linux's roce_hsi.h cmdq_modify_qp):
// - RoCEv2 over IPv4 (IBA vol. 1 annex A17 "RoCEv2"): Ethernet (EtherType 0x0800), IPv4
//   (version 4, IHL 5, DSCP/ECN = the traffic class, total length, identification 0, DF,
//   TTL = the hop limit, protocol 17, header checksum; addresses = the last four bytes of
//   the IPv4-mapped GIDs), UDP (source port per QP, destination port 4791, length,
//   checksum 0, as A17.4.3 allows over IPv4);
// - RoCEv2 over IPv6: Ethernet (0x86DD), IPv6 (traffic class, flow label, payload length,
//   next header 17, hop limit, the GIDs), UDP as above but with its checksum (RFC 8200
//   §8.1 requires one over IPv6);
// - RoCEv1 (annex A16): Ethernet (0x8915), GRH (40 bytes: version 6, traffic class, flow
//   label, payload length, next header 0x1B, hop limit, source GID, destination GID);
// then BTH (12 bytes; PadCnt = (4 - payload % 4) % 4), RETH (16), AETH (4) and immediate
// data (4) where the opcode carries them (IBA Table 38), the payload, PadCnt zero bytes,
// and the ICRC (below). Multi-byte fields are big-endian, as on the wire; the ICRC is
// stored least significant byte first, as Linux's rxe stores it (rxe_icrc.c).
//
// ICRC (IBA §7.8.1; A17.3.3; Linux rxe_icrc.c, rxe_icrc_hdr): the Ethernet CRC-32
// (crc32.hpp) of 8 bytes of 0xFF standing for the LRH, then the packet from the IP header
// (or GRH) to the end of the pad, with the fields a router may change masked to ones:
// IPv4 type of service, TTL and header checksum; IPv6 / GRH traffic class, flow label
// and hop limit; the UDP checksum; BTH's resv8a (the byte before the destination QP).
//
// A frame is built in place, as a NIC builds it in its transmit buffer: encode writes the
// headers and the pad and leaves room for the payload, which the transmitter fills
// straight from its bus read, then seal writes the ICRC (and IPv6's UDP checksum); decode
// leaves the payload where it is, a view of the frame, for the receiver's bus write. So
// each payload byte crosses each bus once and is copied nowhere else.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace rig::bnxt::sim::detail {

using Mac = std::array<std::uint8_t, 6>;
using Gid = std::array<std::uint8_t, 16>;

// MODIFY_QP network_type (§4.6.9): how a QP's packets are framed.
enum class Network : std::uint8_t { ROCE_V1 = 0, ROCE_V2_IPV4 = 2, ROCE_V2_IPV6 = 3 };

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_roce_v1 = 0x8915;
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t roce_v2_udp_port = 4791;  // A17.4.2, IANA "roce"

// IBA Table 38: RC opcodes.
enum class RcOpcode : std::uint8_t {
    SEND_FIRST = 0x00,
    SEND_MIDDLE = 0x01,
    SEND_LAST = 0x02,
    SEND_LAST_WITH_IMMEDIATE = 0x03,
    SEND_ONLY = 0x04,
    SEND_ONLY_WITH_IMMEDIATE = 0x05,
    RDMA_WRITE_FIRST = 0x06,
    RDMA_WRITE_MIDDLE = 0x07,
    RDMA_WRITE_LAST = 0x08,
    RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
    RDMA_WRITE_ONLY = 0x0A,
    RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B,
    RDMA_READ_REQUEST = 0x0C,
    RDMA_READ_RESPONSE_FIRST = 0x0D,
    RDMA_READ_RESPONSE_MIDDLE = 0x0E,
    RDMA_READ_RESPONSE_LAST = 0x0F,
    RDMA_READ_RESPONSE_ONLY = 0x10,
    ACKNOWLEDGE = 0x11,
    ATOMIC_ACKNOWLEDGE = 0x12,
    COMPARE_SWAP = 0x13,
    FETCH_ADD = 0x14,
    SEND_LAST_WITH_INVALIDATE = 0x16,
    SEND_ONLY_WITH_INVALIDATE = 0x17,
};
// Table 38's RC opcodes, 0x15 and 0x18-0x1F reserved. The model runs neither atomics
// (QUERY_FUNC ATOMIC_OPS_NOT_SUPPORTED) nor invalidation: decode takes them so that the
// responder can refuse them as a responder does (responder.cpp).
constexpr bool is_rc_opcode(unsigned op) { return op <= 0x14 || op == 0x16 || op == 0x17; }

// IBA 9.7.5.2, Table 44: AETH syndrome, bits 7:5 the kind (010 and 1xx reserved), bits 4:0
// credits / RNR timer / NAK code (NAK codes 4-31 reserved for RC).
enum class AethKind : std::uint8_t { ACK = 0, RNR_NAK = 1, NAK = 3 };
enum class NakCode : std::uint8_t {
    PSN_SEQUENCE_ERROR = 0,
    INVALID_REQUEST = 1,
    REMOTE_ACCESS_ERROR = 2,
    REMOTE_OPERATIONAL_ERROR = 3,
};

// An allocator whose growth leaves bytes uninitialized: a frame's bytes are each written
// (headers by encode, the payload by a bus read) before anything reads them.
template <class T>
struct Uninitialized : std::allocator<T> {
    Uninitialized() = default;
    template <class U>
    Uninitialized(const Uninitialized<U>&) noexcept {}
    template <class U>
    struct rebind {
        using other = Uninitialized<U>;
    };
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// One Ethernet frame on the wire. Buffers are reused (nic.cpp), so their capacity stays.
using Frame = std::vector<std::byte, Uninitialized<std::byte>>;

struct Reth {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;  // DMA length of the whole message
};

struct Aeth {
    AethKind kind = AethKind::ACK;
    std::uint8_t value = 0x1F;  // ACK: credits (0x1F = invalid); RNR: timer; NAK: NakCode
    std::uint32_t msn = 0;      // 24 bits
};

struct Packet {
    Network network = Network::ROCE_V2_IPV4;
    Mac dst_mac{};
    Mac src_mac{};
    std::uint8_t traffic_class = 0;   // IPv4: the type-of-service byte (DSCP << 2 | ECN)
    std::uint32_t flow_label = 0;     // IPv6 and GRH, 20 bits
    std::uint8_t hop_limit = 64;      // IPv4: the TTL
    std::uint16_t src_port = 0xC000;  // RoCEv2: the UDP source port
    Gid sgid{};                       // IPv4: ::ffff:a.b.c.d
    Gid dgid{};
    RcOpcode opcode = RcOpcode::ACKNOWLEDGE;
    bool solicited = false;
    std::uint16_t pkey = 0xFFFF;
    std::uint32_t dest_qp = 0;  // 24 bits
    bool ack_request = false;
    std::uint32_t psn = 0;  // 24 bits
    std::optional<Reth> reth;
    std::optional<Aeth> aeth;
    std::optional<std::uint32_t> immediate;
    // Decoded: a view of the frame, valid while the frame is, the pad left out. encode does
    // not read it: it leaves room for the payload, which the caller fills.
    std::span<const std::byte> payload;
};

// Which extension headers an opcode carries (IBA Table 38).
constexpr bool has_reth(RcOpcode op) {
    switch (op) {
    case RcOpcode::RDMA_WRITE_FIRST:
    case RcOpcode::RDMA_WRITE_ONLY:
    case RcOpcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE:
    case RcOpcode::RDMA_READ_REQUEST: return true;
    default: return false;
    }
}

constexpr bool has_aeth(RcOpcode op) {
    switch (op) {
    case RcOpcode::RDMA_READ_RESPONSE_FIRST:
    case RcOpcode::RDMA_READ_RESPONSE_LAST:
    case RcOpcode::RDMA_READ_RESPONSE_ONLY:
    case RcOpcode::ACKNOWLEDGE:
    case RcOpcode::ATOMIC_ACKNOWLEDGE: return true;
    default: return false;
    }
}

// The bytes of the extension headers the model does not read (Table 38): AtomicETH
// (28), AtomicAckETH (8), IETH (4).
constexpr std::size_t unread_header_bytes(RcOpcode op) {
    switch (op) {
    case RcOpcode::COMPARE_SWAP:
    case RcOpcode::FETCH_ADD: return 28;
    case RcOpcode::ATOMIC_ACKNOWLEDGE: return 8;
    case RcOpcode::SEND_LAST_WITH_INVALIDATE:
    case RcOpcode::SEND_ONLY_WITH_INVALIDATE: return 4;
    default: return 0;
    }
}

constexpr bool has_immediate(RcOpcode op) {
    switch (op) {
    case RcOpcode::SEND_LAST_WITH_IMMEDIATE:
    case RcOpcode::SEND_ONLY_WITH_IMMEDIATE:
    case RcOpcode::RDMA_WRITE_LAST_WITH_IMMEDIATE:
    case RcOpcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE: return true;
    default: return false;
    }
}

inline constexpr std::size_t eth_bytes = 14;
inline constexpr std::size_t ipv4_bytes = 20;
inline constexpr std::size_t ipv6_bytes = 40;  // and the GRH
inline constexpr std::size_t udp_bytes = 8;
inline constexpr std::size_t bth_bytes = 12;
inline constexpr std::size_t icrc_bytes = 4;

// The longest frame the model builds or takes: Ethernet, IPv6, UDP, BTH, RETH and
// immediate data (RDMA WRITE ONLY with immediate), a full 4096-byte path MTU of payload
// (IBA 9.7.1) and the ICRC: 4194 bytes.
constexpr std::size_t max_frame_bytes = eth_bytes + ipv6_bytes + udp_bytes + bth_bytes + 16 + 4 + 4096 + icrc_bytes;

// Why decode refused a frame (each counted apart by the port, rig/bnxt/sim/model.hpp).
enum class Malformed : std::uint8_t {
    not_roce,      // another EtherType or IP protocol, an IP fragment, IPv4 options, BTH TVer != 0
    truncated,     // shorter than its headers, or than its IP, UDP or GRH length
    length,        // longer than those lengths, lengths that disagree, PadCnt beyond the payload
    ip_checksum,   // IPv4 header checksum
    udp_checksum,  // IPv6's UDP checksum, zero or wrong (RFC 8200 §8.1)
    udp_port,      // UDP to a destination port other than 4791
    opcode,        // a RoCE packet of an opcode the model does not take (only RC's of Table 38)
    aeth,          // an AETH syndrome of a reserved kind (IBA Table 44: 010, 1xx)
    icrc,
};

// Makes `out` the frame of p's headers (by p.network) followed by `payload_bytes` bytes of
// payload, the pad and room for the ICRC, and returns that payload's span for the caller
// to fill (p.payload is not used); then seal(out).
std::span<std::byte> encode(const Packet& p, std::size_t payload_bytes, Frame& out);
// Writes the ICRC of a frame encode made (and IPv6's UDP checksum, which covers it).
void seal(std::span<std::byte> frame);
// The packet of a frame, its payload a view of `frame`, or why it is none. Checks, in this
// order: the Ethernet header, the IP header (version, IHL 5, checksum, lengths, not a
// fragment), UDP (length, port 4791, over IPv6 its checksum: RFC 8200 §8.1; over IPv4 it
// is left to the ICRC), the ICRC, BTH and
// the extension headers its opcode carries (an AETH of a reserved kind is malformed),
// PadCnt. Addresses are the port's to
// check (frames.cpp). The frame is as it was after (icrc changes it while it runs).
std::expected<Packet, Malformed> decode(std::span<std::byte> frame);
// The ICRC of a frame of any of the three formats whose headers are whole (the last four
// bytes are the ICRC's place, not read); nullopt where the frame is too short or of no
// RoCE EtherType. It masks the frame in place while it runs (one CRC over the frame, not
// one over a copy of its headers and another over the rest) and puts every byte back.
std::optional<std::uint32_t> icrc(std::span<std::byte> frame);

// The UDP source port of a RoCEv2 QP, as Linux's rdma_get_udp_sport computes it
// (include/rdma/ib_verbs.h): the flow label, or where it is 0 rdma_calc_flow_label of the
// two QP numbers, folded into 14 bits above 0xC000. rxe's QP 0x11 connected to QP 0x11
// sends from 0xC121 (tests/interop/fixtures).
std::uint16_t udp_source_port(std::uint32_t flow_label, std::uint32_t qpn, std::uint32_t dest_qpn);

// The IPv4 header checksum (RFC 791, RFC 1071) of `header` with its checksum field as it
// is: 0 where the field holds the right one.
std::uint16_t ipv4_checksum(std::span<const std::byte> header);
// The RFC 1071 ones'-complement sum of `bytes` (an odd last byte padded with zero) added
// to `sum`, not folded or complemented.
std::uint64_t ones_sum(std::span<const std::byte> bytes, std::uint64_t sum = 0);
std::uint16_t fold_complement(std::uint64_t sum);

// 24-bit PSN arithmetic: a - b as a signed distance in (-2^23, 2^23].
std::int32_t psn_diff(std::uint32_t a, std::uint32_t b);
inline std::uint32_t psn_add(std::uint32_t a, std::uint32_t n) { return (a + n) & 0xFFFFFF; }

}  // namespace rig::bnxt::sim::detail
