// RoCE packet encoding and decoding for the Wire (packet.hpp): Ethernet, GRH, BTH and the
// RC extension headers, big-endian, as IBA vol. 1 §9.2-§9.3 and annex A16 lay them out.
#include "packet.hpp"

#include <cstring>

namespace rig::bnxt::sim::detail {
namespace {

constexpr std::uint16_t ethertype_roce = 0x8915;
constexpr std::uint8_t grh_next_header_bth = 0x1B;
constexpr std::size_t eth_bytes = 14;
constexpr std::size_t grh_bytes = 40;
constexpr std::size_t bth_bytes = 12;
constexpr std::size_t reth_bytes = 16;
constexpr std::size_t aeth_bytes = 4;
constexpr std::size_t imm_bytes = 4;
static_assert(max_frame_bytes == eth_bytes + grh_bytes + bth_bytes + reth_bytes + aeth_bytes + imm_bytes + 4096);

// Writes headers from the start of a frame whose size is already that of the headers.
class Writer {
public:
    explicit Writer(std::byte* at) : at_(at) {}
    void u8(std::uint64_t v) { *at_++ = static_cast<std::byte>(v & 0xFF); }
    template <unsigned Bytes>
    void be(std::uint64_t v) {
        for (unsigned i = 0; i < Bytes; ++i) at_[i] = static_cast<std::byte>(v >> (8 * (Bytes - 1 - i)));
        at_ += Bytes;
    }
    template <std::size_t N>
    void raw(const std::array<std::uint8_t, N>& a) {
        std::memcpy(at_, a.data(), N);
        at_ += N;
    }

private:
    std::byte* at_;
};

class Reader {
public:
    explicit Reader(std::span<const std::byte> in) : in_(in) {}
    bool has(std::size_t n) const { return in_.size() - at_ >= n; }
    template <unsigned Bytes>
    std::uint64_t be() {
        std::uint64_t v = 0;
        for (unsigned i = 0; i < Bytes; ++i) v = (v << 8) | std::to_integer<std::uint8_t>(in_[at_ + i]);
        at_ += Bytes;
        return v;
    }
    template <std::size_t N>
    void raw(std::array<std::uint8_t, N>& a) {
        std::memcpy(a.data(), in_.data() + at_, N);
        at_ += N;
    }
    std::span<const std::byte> rest() const { return in_.subspan(at_); }

private:
    std::span<const std::byte> in_;
    std::size_t at_ = 0;
};

std::size_t header_bytes(RcOpcode op) {
    return bth_bytes + (has_reth(op) ? reth_bytes : 0) + (has_aeth(op) ? aeth_bytes : 0) +
           (has_immediate(op) ? imm_bytes : 0);
}

}  // namespace

std::span<std::byte> encode(const Packet& p, std::size_t payload_bytes, Frame& out) {
    const std::size_t headers = eth_bytes + grh_bytes + header_bytes(p.opcode);
    out.resize(headers + payload_bytes);
    Writer w(out.data());
    w.raw(p.dst_mac);
    w.raw(p.src_mac);
    w.be<2>(ethertype_roce);
    // GRH: IP version 6, traffic class, flow label; payload length counts BTH onwards.
    w.be<4>((std::uint64_t{6} << 28) | (std::uint64_t{p.traffic_class} << 20) | (p.flow_label & 0xFFFFF));
    w.be<2>(header_bytes(p.opcode) + payload_bytes);
    w.u8(grh_next_header_bth);
    w.u8(p.hop_limit);
    w.raw(p.sgid);
    w.raw(p.dgid);
    // BTH: opcode; SE, MigReq, PadCnt, TVer; P_Key; reserved, DestQP; AckReq, reserved, PSN.
    w.u8(static_cast<std::uint8_t>(p.opcode));
    w.u8(p.solicited ? 0x80 : 0x00);
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
    return std::span(out).subspan(headers);
}

namespace {

// decode's body, into the caller's Packet: false where the frame is not one of ours.
bool read_packet(std::span<const std::byte> frame, Packet& p) {
    Reader r(frame);
    if (!r.has(eth_bytes + grh_bytes + bth_bytes)) return false;
    r.raw(p.dst_mac);
    r.raw(p.src_mac);
    if (r.be<2>() != ethertype_roce) return false;
    const std::uint64_t first = r.be<4>();
    if ((first >> 28) != 6) return false;
    p.traffic_class = static_cast<std::uint8_t>(first >> 20);
    p.flow_label = static_cast<std::uint32_t>(first & 0xFFFFF);
    const std::uint64_t payload_length = r.be<2>();
    if (r.be<1>() != grh_next_header_bth) return false;
    p.hop_limit = static_cast<std::uint8_t>(r.be<1>());
    r.raw(p.sgid);
    r.raw(p.dgid);
    if (payload_length != r.rest().size()) return false;
    const auto opcode = r.be<1>();
    if (opcode > static_cast<unsigned>(RcOpcode::ACKNOWLEDGE)) return false;
    p.opcode = static_cast<RcOpcode>(opcode);
    p.solicited = (r.be<1>() & 0x80) != 0;
    p.pkey = static_cast<std::uint16_t>(r.be<2>());
    p.dest_qp = static_cast<std::uint32_t>(r.be<4>() & 0xFFFFFF);
    const std::uint64_t psn_word = r.be<4>();
    p.ack_request = (psn_word & 0x80000000u) != 0;
    p.psn = static_cast<std::uint32_t>(psn_word & 0xFFFFFF);
    if (!r.has(header_bytes(p.opcode) - bth_bytes)) return false;
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
        a.kind = static_cast<AethKind>(syndrome >> 5);
        a.value = syndrome & 0x1F;
        a.msn = static_cast<std::uint32_t>(r.be<3>());
        p.aeth = a;
    }
    if (has_immediate(p.opcode)) p.immediate = static_cast<std::uint32_t>(r.be<4>());
    p.payload = r.rest();
    return true;
}

}  // namespace

std::optional<Packet> decode(std::span<const std::byte> frame) {
    // Built in place (one named result, returned by NRVO): copying a Packet out of a
    // local cost more than the rest of decode.
    std::optional<Packet> out(std::in_place);
    if (!read_packet(frame, *out)) out.reset();
    return out;
}

std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
    std::int32_t d = static_cast<std::int32_t>((a - b) & 0xFFFFFF);
    if (d > 0x800000) d -= 0x1000000;
    return d;
}

}  // namespace rig::bnxt::sim::detail
