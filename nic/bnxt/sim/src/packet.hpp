// packet.hpp: the RoCE packets two bnxt models exchange over a Wire.
//
// Framing (InfiniBand Architecture vol. 1, RoCE annex A16 "RoCEv1"): Ethernet header
// (destination MAC, source MAC, EtherType 0x8915), GRH (40 bytes: version 6, traffic class,
// flow label, payload length, next header 0x1B, hop limit, source GID, destination GID),
// BTH (12 bytes), then RETH (16), AETH (4) and immediate data (4) where the opcode carries
// them, then the payload. Multi-byte fields are big-endian, as on the wire. The ICRC is
// left out: the wire does not corrupt frames.
//
// A frame is built in place, as a NIC builds it in its transmit buffer: encode writes the
// headers and leaves room for the payload, which the transmitter fills straight from its
// bus read; decode leaves the payload where it is, a view of the frame, for the receiver's
// bus write. So each payload byte crosses each bus once and is copied nowhere else.
//
// Gap to the hardware: a QP of network type RoCEv2 (MODIFY_QP) sends IPv4/UDP frames on a
// real port; the model frames every packet as RoCEv1. Only two models talk over a Wire,
// and both check what RoCEv2 checks (destination MAC and GID, QP, PSN).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace rig::bnxt::sim::detail {

using Mac = std::array<std::uint8_t, 6>;
using Gid = std::array<std::uint8_t, 16>;

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
};

// IBA 9.7.5.2: AETH syndrome, bits 7:5 the kind, bits 4:0 credits / RNR timer / NAK code.
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
    Mac dst_mac{};
    Mac src_mac{};
    std::uint8_t traffic_class = 0;
    std::uint32_t flow_label = 0;
    std::uint8_t hop_limit = 64;
    Gid sgid{};
    Gid dgid{};
    RcOpcode opcode = RcOpcode::ACKNOWLEDGE;
    bool solicited = false;
    std::uint16_t pkey = 0xFFFF;
    std::uint32_t dest_qp = 0;  // 24 bits
    bool ack_request = false;
    std::uint32_t psn = 0;      // 24 bits
    std::optional<Reth> reth;
    std::optional<Aeth> aeth;
    std::optional<std::uint32_t> immediate;
    // Decoded: a view of the frame, valid while the frame is. encode does not read it: it
    // leaves room for the payload, which the caller fills.
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
        case RcOpcode::ACKNOWLEDGE: return true;
        default: return false;
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


// The longest frame the model builds: Ethernet, GRH, BTH, RETH, AETH and immediate
// headers (packet.cpp) around a full 4096-byte path MTU of payload (IBA 9.7.1).
constexpr std::size_t max_frame_bytes = 14 + 40 + 12 + 16 + 4 + 4 + 4096;

// Makes `out` the frame of p's headers followed by `payload_bytes` bytes of payload, and
// returns that payload's span for the caller to fill (p.payload is not used).
std::span<std::byte> encode(const Packet& p, std::size_t payload_bytes, Frame& out);
// nullopt: not a RoCE frame of this format, or shorter than its headers. The payload is a
// view of `frame`.
std::optional<Packet> decode(std::span<const std::byte> frame);

// 24-bit PSN arithmetic: a - b as a signed distance in (-2^23, 2^23].
std::int32_t psn_diff(std::uint32_t a, std::uint32_t b);
inline std::uint32_t psn_add(std::uint32_t a, std::uint32_t n) { return (a + n) & 0xFFFFFF; }

}  // namespace rig::bnxt::sim::detail
