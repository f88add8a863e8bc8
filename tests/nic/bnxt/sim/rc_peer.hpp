// tests/nic/bnxt/sim/rc_peer.hpp: one bnxt model's RC QP (B, 10.0.0.2) connected to a peer
// that is not a model (10.0.0.1, QP 0x11, path MTU 1024): the test writes the peer's
// frames byte by byte from IBA vol. 1 §9.2-§9.3 and annex A17 (RoCEv2 over IPv4), puts
// them on B's port (Faults::receive), and reads what B sent off a capture of its cable,
// to face B with packets no correct peer sends.
#pragma once

#include <gtest/gtest.h>

#include <optional>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "transport.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {

constexpr Mac peer_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr Gid peer_gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
constexpr std::uint32_t peer_qpn = 0x11;
constexpr std::uint32_t first_psn = 0x100;
constexpr std::uint32_t mtu = 1024;  // path MTU code 2

// IBA Table 38 RC opcodes (the model's names are private).
enum RcOp : std::uint8_t {
    SEND_FIRST = 0x00,
    SEND_MIDDLE = 0x01,
    SEND_LAST = 0x02,
    SEND_LAST_IMM = 0x03,
    SEND_ONLY = 0x04,
    WRITE_FIRST = 0x06,
    WRITE_MIDDLE = 0x07,
    WRITE_LAST = 0x08,
    WRITE_LAST_IMM = 0x09,
    WRITE_ONLY = 0x0A,
    READ_REQUEST = 0x0C,
    READ_RESPONSE_FIRST = 0x0D,
    READ_RESPONSE_LAST = 0x0F,
    READ_RESPONSE_ONLY = 0x10,
    ACKNOWLEDGE = 0x11,
    ATOMIC_ACKNOWLEDGE = 0x12,
    COMPARE_SWAP = 0x13,
    FETCH_ADD = 0x14,
    SEND_LAST_INVALIDATE = 0x16,
    SEND_ONLY_INVALIDATE = 0x17,
};

struct Reth {
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
};

// One request of the peer: its BTH, the RETH, immediate data or `extra` zero bytes of
// another extension header (AtomicETH 28, IETH 4) where it carries them, and `payload`.
struct Request {
    std::uint8_t opcode = SEND_ONLY;
    std::uint32_t psn = first_psn;
    Bytes payload;
    std::optional<Reth> reth;
    std::optional<std::uint32_t> aeth;  // syndrome << 24 | MSN
    bool immediate = false;
    std::size_t extra = 0;
    bool ack_request = true;

    Request& with(Bytes p) {
        payload = std::move(p);
        return *this;
    }
    Request& with(Reth r) {
        reth = r;
        return *this;
    }
    Request& with_aeth(std::uint8_t syndrome, std::uint32_t msn) {
        aeth = std::uint32_t{syndrome} << 24 | msn;
        return *this;
    }
    Request& with_immediate() {
        immediate = true;
        return *this;
    }
    Request& with_extra(std::size_t n) {
        extra = n;
        return *this;
    }
    Request& no_ack_request() {
        ack_request = false;
        return *this;
    }
};

inline Request request(std::uint8_t opcode, std::uint32_t psn = first_psn) {
    Request r;
    r.opcode = opcode;
    r.psn = psn;
    return r;
}

inline void put_be(Bytes& f, std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) f.push_back(static_cast<std::byte>(v >> (8 * (n - 1 - i))));
}

inline std::uint32_t be(const Bytes& f, std::size_t at, unsigned n) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint32_t>(f[at + i]);
    return v;
}

class RcPeerTest : public ::testing::Test {
protected:
    // B's QP connected to the peer, expecting `first_psn`, with a responder depth of
    // `depth` READs (max_dest_rd_atomic 2 x depth + 2).
    void open(std::uint8_t depth = 1) {
        b.up();
        cq = b.create_cq(64);
        qp = b.create_qp(cq, cq, 16, 16);
        ASSERT_EQ(b.to_init(qp), 0);
        ASSERT_EQ(b.to_rtr(qp, peer_gid, peer_mac, peer_qpn, first_psn, 2, static_cast<std::uint8_t>(2 * depth + 2)),
                  0);
        ASSERT_EQ(b.to_rts(qp), 0);
        key = b.dma_mr(spec::mr_local_write | spec::mr_remote_read | spec::mr_remote_write);
        receive = b.bus.alloc(64 * 1024);
        region = b.bus.alloc(64 * 1024);
        b.bus.poke(receive, untouched);
        b.bus.poke(region, untouched);
        ASSERT_TRUE(wire.capture(dir.path() / "wire.pcap"));
    }
    void SetUp() override { open(); }

    // Ethernet, IPv4 (RFC 791, checksum by RFC 1071), UDP (checksum 0, A17.4.3), BTH,
    // extension headers, payload, pad, ICRC.
    Bytes frame(const Request& r) const {
        const std::size_t pad = (4 - r.payload.size() % 4) % 4;
        const std::size_t transport = 12 + (r.reth ? 16 : 0) + (r.aeth ? 4 : 0) + (r.immediate ? 4 : 0) + r.extra;
        const std::size_t udp = 8 + transport + r.payload.size() + pad + 4;
        Bytes f;
        f.insert(f.end(), reinterpret_cast<const std::byte*>(b.mac.data()),
                 reinterpret_cast<const std::byte*>(b.mac.data()) + 6);
        f.insert(f.end(), reinterpret_cast<const std::byte*>(peer_mac.data()),
                 reinterpret_cast<const std::byte*>(peer_mac.data()) + 6);
        put_be(f, 0x0800, 2);
        put_be(f, 0x4500, 2);
        put_be(f, 20 + udp, 2);
        put_be(f, 0, 2);
        put_be(f, 0x4000, 2);  // DF
        put_be(f, 0x4011, 2);  // TTL 64, UDP
        put_be(f, 0, 2);
        put_be(f, 0x0A000001, 4);
        put_be(f, 0x0A000002, 4);
        std::uint32_t sum = 0;
        for (std::size_t i = 14; i < 34; i += 2) sum += be(f, i, 2);
        while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
        f[24] = static_cast<std::byte>((~sum >> 8) & 0xFF);
        f[25] = static_cast<std::byte>(~sum & 0xFF);
        put_be(f, 0xC000, 2);
        put_be(f, 4791, 2);
        put_be(f, udp, 2);
        put_be(f, 0, 2);
        put_be(f, r.opcode, 1);
        put_be(f, pad << 4, 1);
        put_be(f, 0xFFFF, 2);
        put_be(f, qp.qpn, 4);
        put_be(f, (r.ack_request ? 0x80000000u : 0u) | r.psn, 4);
        if (r.reth) {
            put_be(f, r.reth->va, 8);
            put_be(f, r.reth->rkey, 4);
            put_be(f, r.reth->length, 4);
        }
        if (r.aeth) put_be(f, *r.aeth, 4);
        if (r.immediate) put_be(f, 0x12345678, 4);
        f.insert(f.end(), r.extra, std::byte{0});
        f.insert(f.end(), r.payload.begin(), r.payload.end());
        f.insert(f.end(), pad + 4, std::byte{0});
        const std::uint32_t icrc = testing::icrc(f).value();
        for (unsigned i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<std::byte>(icrc >> (8 * i));
        return f;
    }

    // The first of a two-packet WRITE into the region.
    Request write_first() const {
        return request(WRITE_FIRST).with(Bytes(mtu, std::byte{1})).with(Reth{region, key, 2 * mtu}).no_ack_request();
    }

    void take(const Request& r) {
        b.faults.receive(frame(r));
        b.settle();
    }

    // What B sent, in order (the capture ends here).
    std::vector<Bytes> sent() {
        wire.stop_capture();
        std::vector<Bytes> out;
        for (auto& f : rig::test::read_pcap(dir.path() / "wire.pcap").frames) out.push_back(std::move(f.bytes));
        return out;
    }

    // The BTH and AETH B's acknowledgement of `psn` carries: syndrome, MSN.
    Bytes acknowledgement(std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn) const {
        Bytes f;
        put_be(f, ACKNOWLEDGE, 1);
        put_be(f, 0, 1);
        put_be(f, 0xFFFF, 2);
        put_be(f, peer_qpn, 4);
        put_be(f, psn, 4);
        put_be(f, syndrome, 1);
        put_be(f, msn, 3);
        return f;
    }
    static Bytes bth_and_aeth(const Bytes& f) { return Bytes(f.begin() + 42, f.begin() + 58); }

    // B's answer was exactly one NAK Invalid Request of `psn` (IBA 9.7.5.2.2: syndrome
    // 0x61), its QP is in ERR, and neither the region nor the receive buffer past
    // `received` bytes was written.
    void expect_invalid_request(std::uint32_t psn, std::uint32_t msn = 0, std::size_t received = 0) {
        const auto out = sent();
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(bth_and_aeth(out[0]), acknowledgement(psn, 0x61, msn));
        EXPECT_EQ(qp_state(b, qp), ERR);
        EXPECT_TRUE(b.bus.peek(region, untouched.size()) == untouched);
        EXPECT_TRUE(b.bus.peek(receive + received, untouched.size() - received) ==
                    Bytes(untouched.begin() + static_cast<std::ptrdiff_t>(received), untouched.end()));
    }

    rig::test::TempDir dir;
    Node b{2};
    Model far;  // the cable's other end: never attached, never stepped
    Wire wire{b.nic, far};
    Cq cq;
    Qp qp;
    std::uint32_t key = 0;
    std::uint64_t receive = 0, region = 0;
    const Bytes untouched = Bytes(8192, std::byte{0xEE});
};

}  // namespace rig::bnxt::sim::test
