// The responder of an RC QP against requests no correct requester sends
// (nic/bnxt/sim/src/responder.cpp): each frame assembled here byte by byte from IBA vol. 1
// §9.2-§9.3 and annex A17 (RoCEv2 over IPv4) as from a peer at 10.0.0.1, QP 0x11, and put
// on the port (Faults::receive); the answer read off a capture of its cable and compared
// byte for byte (BTH and AETH), the regions and receive buffers checked untouched. What
// Linux's rxe does with the same request is the reference (rxe_resp.c, named at each test).
#include <gtest/gtest.h>

#include <optional>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "pair.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {
namespace {

constexpr Mac peer_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr Gid peer_gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
constexpr std::uint32_t peer_qpn = 0x11;
constexpr std::uint32_t first_psn = 0x100;
constexpr std::uint32_t mtu = 1024;  // path MTU code 2

// IBA Table 38 RC opcodes (the model's names are private).
enum Op : std::uint8_t {
    SEND_FIRST = 0x00, SEND_MIDDLE = 0x01, SEND_LAST = 0x02, SEND_LAST_IMM = 0x03, SEND_ONLY = 0x04,
    WRITE_FIRST = 0x06, WRITE_MIDDLE = 0x07, WRITE_LAST = 0x08, WRITE_LAST_IMM = 0x09, WRITE_ONLY = 0x0A,
    READ_REQUEST = 0x0C, READ_RESPONSE_FIRST = 0x0D, READ_RESPONSE_LAST = 0x0F, READ_RESPONSE_ONLY = 0x10,
    ACKNOWLEDGE = 0x11, ATOMIC_ACKNOWLEDGE = 0x12, COMPARE_SWAP = 0x13, FETCH_ADD = 0x14,
    SEND_LAST_INVALIDATE = 0x16, SEND_ONLY_INVALIDATE = 0x17,
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
    bool immediate = false;
    std::size_t extra = 0;
    bool ack_request = true;

    Request& with(Bytes p) { payload = std::move(p); return *this; }
    Request& with(Reth r) { reth = r; return *this; }
    Request& with_immediate() { immediate = true; return *this; }
    Request& with_extra(std::size_t n) { extra = n; return *this; }
    Request& no_ack_request() { ack_request = false; return *this; }
};

Request request(std::uint8_t opcode, std::uint32_t psn = first_psn) {
    Request r;
    r.opcode = opcode;
    r.psn = psn;
    return r;
}

void put_be(Bytes& f, std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) f.push_back(static_cast<std::byte>(v >> (8 * (n - 1 - i))));
}

std::uint32_t be(const Bytes& f, std::size_t at, unsigned n) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint32_t>(f[at + i]);
    return v;
}

class ResponderTest : public ::testing::Test {
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
        const std::size_t transport = 12 + (r.reth ? 16 : 0) + (r.immediate ? 4 : 0) + r.extra;
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

    static constexpr std::uint8_t ERR = 6;
    rig::test::TempDir dir;
    Node b{2};
    Nic far;  // the cable's other end: never attached, never stepped
    Wire wire{b.nic, far};
    Cq cq;
    Qp qp;
    std::uint32_t key = 0;
    std::uint64_t receive = 0, region = 0;
    const Bytes untouched = Bytes(8192, std::byte{0xEE});
};

// ---- IBA 9.7.5.1.x, rxe check_op_seq: the opcode sequence ----

// A MIDDLE or LAST with no FIRST before it (rxe: RESPST_ERR_MISSING_OPCODE_FIRST, class C):
// NAK Invalid Request, the QP to ERR, nothing written.
class MissingFirst : public ResponderTest, public ::testing::WithParamInterface<std::uint8_t> {};

TEST_P(MissingFirst, IsNakedInvalidRequestAndWritesNothing) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    const std::uint8_t op = GetParam();
    const bool write = op >= WRITE_FIRST;
    Request r = request(op).with(Bytes(op == SEND_MIDDLE || op == WRITE_MIDDLE ? mtu : 100, std::byte{1}));
    if (op == SEND_LAST_IMM || op == WRITE_LAST_IMM) r.with_immediate();
    take(r);
    expect_invalid_request(first_psn);
    EXPECT_FALSE(b.poll(cq)) << (write ? "a WRITE" : "a SEND") << " consumed the receive";
}

INSTANTIATE_TEST_SUITE_P(EachMiddleAndLast, MissingFirst,
                         ::testing::Values(SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, WRITE_MIDDLE, WRITE_LAST,
                                           WRITE_LAST_IMM));

// After SEND FIRST only SEND MIDDLE or LAST (rxe: RESPST_ERR_MISSING_OPCODE_LAST_C): a WRITE
// ONLY there is refused, writes nothing, and the receive the SEND was filling completes with
// REMOTE_INVALID_REQUEST_ERR, as rxe's do_complete completes resp.wqe with
// IB_WC_REM_INV_REQ_ERR.
TEST_F(ResponderTest, WriteOnlyInsideASendIsNakedAndTheReceiveFails) {
    b.post_recv(qp, 7, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu, std::byte{1})).no_ack_request());
    take(request(WRITE_ONLY, first_psn + 1).with(Bytes(64, std::byte{2})).with(Reth{region, key, 64}));
    expect_invalid_request(first_psn + 1, 0, mtu);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->wr_id(), 7u);
    EXPECT_EQ(c->status(), 0x6);  // REMOTE_INVALID_REQUEST_ERR (§5.5.2)
    EXPECT_TRUE(b.bus.peek(receive, mtu) == Bytes(mtu, std::byte{1}));
}

// After WRITE FIRST only WRITE MIDDLE or LAST: a SEND ONLY or a READ there is refused and
// takes no receive, sends no response.
TEST_F(ResponderTest, SendOnlyInsideAWriteIsNakedAndTakesNoReceive) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    take(write_first());
    b.bus.poke(region, untouched);  // what the FIRST wrote, put back
    take(request(SEND_ONLY, first_psn + 1).with(Bytes(64, std::byte{2})));
    expect_invalid_request(first_psn + 1);
    EXPECT_FALSE(b.poll(cq));
}

TEST_F(ResponderTest, ReadInsideAWriteIsNakedAndAnsweredWithNoResponse) {
    take(write_first());
    b.bus.poke(region, untouched);
    take(request(READ_REQUEST, first_psn + 1).with(Reth{region, key, 64}));
    expect_invalid_request(first_psn + 1);
}


// ---- rxe check_length: the payload of each packet, the DMA length ----

// FIRST and MIDDLE carry exactly the path MTU, LAST 1 to MTU bytes, ONLY 0 to MTU; a
// RETH's DMA length is at most 2^31 (rxe: RESPST_ERR_LENGTH, class C). Checked once the
// receive is taken, so a SEND's receive completes with REMOTE_INVALID_REQUEST_ERR, empty.
TEST_F(ResponderTest, SendFirstShorterThanTheMtuIsNakedAndFailsTheReceive) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu - 24, std::byte{1})).no_ack_request());
    expect_invalid_request(first_psn);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
    EXPECT_EQ(c->wr_id(), 3u);
}

TEST_F(ResponderTest, SendLastOfNoBytesIsNaked) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu, std::byte{1})).no_ack_request());
    take(request(SEND_LAST, first_psn + 1));
    expect_invalid_request(first_psn + 1, 0, mtu);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
    EXPECT_EQ(c->length(), mtu);
}

// A payload above the path MTU is refused, not dropped unanswered.
TEST_F(ResponderTest, SendOnlyAboveTheMtuIsNakedNotDropped) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_ONLY).with(Bytes(mtu + 4, std::byte{1})));
    expect_invalid_request(first_psn);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
}

TEST_F(ResponderTest, WriteMiddleShorterThanTheMtuIsNaked) {
    take(write_first());
    b.bus.poke(region, untouched);
    take(request(WRITE_MIDDLE, first_psn + 1).with(Bytes(mtu / 2, std::byte{2})).no_ack_request());
    expect_invalid_request(first_psn + 1);
}

TEST_F(ResponderTest, WriteOfADmaLengthAbove2To31IsNakedAndWritesNothing) {
    take(request(WRITE_FIRST).with(Bytes(mtu, std::byte{1})).with(Reth{region, key, (1u << 31) + mtu}));
    expect_invalid_request(first_psn);
}

// ---- rxe duplicate_request, find_resource: a duplicate READ ----

// A READ behind the expected PSN is answered again only from the record of a READ taken,
// one of the last `depth` (max_dest_rd_atomic), whose PSNs it falls in, with the same
// R_Key and a range inside the recorded one; else it is dropped (rxe: "Resource not found.
// Class D error").
class DuplicateRead : public ResponderTest {
protected:
    void SetUp() override {
        ResponderTest::SetUp();
        b.bus.poke(region, data);
    }
    // B's responses since the last look, as (opcode, PSN) and their payloads.
    struct Response {
        std::uint8_t opcode;
        std::uint32_t psn;
        Bytes payload;
    };
    std::vector<Response> responses() {
        std::vector<Response> out;
        for (const Bytes& f : sent()) {
            const std::uint8_t op = static_cast<std::uint8_t>(be(f, 42, 1));
            const std::size_t pad = (be(f, 43, 1) >> 4) & 3;
            const std::size_t at = 42 + 12 + (op == 0x0E ? 0 : 4);
            out.push_back({op, be(f, 51, 3), Bytes(f.begin() + static_cast<std::ptrdiff_t>(at),
                                                   f.end() - 4 - static_cast<std::ptrdiff_t>(pad))});
        }
        return out;
    }
    Request read(std::uint32_t psn, std::uint64_t offset, std::uint32_t length) const {
        return request(READ_REQUEST, psn).with(Reth{region + offset, key, length});
    }
    const Bytes data = pattern(8192, 41);
};

TEST_F(DuplicateRead, WithinTheRecordedReadIsAnsweredFromItsPsn) {
    take(read(first_psn, 0, 3000));       // responses at PSN +0, +1, +2
    take(read(first_psn + 1, 1024, 1976));  // the rest again, from the second response
    const auto out = responses();
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[3].opcode, READ_RESPONSE_FIRST);
    EXPECT_EQ(out[3].psn, first_psn + 1);
    EXPECT_EQ(out[4].opcode, READ_RESPONSE_LAST);
    EXPECT_EQ(out[4].psn, first_psn + 2);
    EXPECT_TRUE(out[3].payload == Bytes(data.begin() + 1024, data.begin() + 2048));
    EXPECT_TRUE(out[4].payload == Bytes(data.begin() + 2048, data.begin() + 3000));
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
}

TEST_F(DuplicateRead, AtThePsnOfASendIsDropped) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    take(read(first_psn, 0, 3000));
    take(request(SEND_ONLY, first_psn + 3).with(Bytes(64, std::byte{1})));
    const auto dropped = b.counters().frames_dropped;
    take(read(first_psn + 3, 0, 64));  // no READ took PSN +3
    const auto out = responses();
    ASSERT_EQ(out.size(), 4u);  // three responses and the SEND's ACK
    EXPECT_EQ(out[3].opcode, ACKNOWLEDGE);
    EXPECT_EQ(b.counters().frames_dropped, dropped + 1);
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
}

TEST_F(DuplicateRead, OutsideTheRecordedRangeOrOfAnotherKeyIsDropped) {
    take(read(first_psn, 0, 3000));
    take(read(first_psn, 4096, 100));                                          // beyond it
    take(read(first_psn, 0, 3001));                                            // longer
    take(request(READ_REQUEST, first_psn).with(Reth{region, key ^ 0x100, 3000}));  // another R_Key
    EXPECT_EQ(responses().size(), 3u);
    EXPECT_EQ(b.counters().duplicate_requests, 3u);
    EXPECT_EQ(qp_state(b, qp), 3);  // RTS: a dropped duplicate is no error
}

// Depth 1: the second READ's record takes the first's place.
TEST_F(DuplicateRead, OnlyTheLastDepthReadsAreAnsweredAgain) {
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    take(read(first_psn, 0, 64));      // forgotten: dropped
    take(read(first_psn + 1, 64, 64));  // answered again
    const auto out = responses();
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[2].psn, first_psn + 1);
    EXPECT_TRUE(out[2].payload == Bytes(data.begin() + 64, data.begin() + 128));
}

class DuplicateReadDepthTwo : public DuplicateRead {
protected:
    void SetUp() override {
        open(2);
        b.bus.poke(region, data);
    }
};

TEST_F(DuplicateReadDepthTwo, BothReadsAreAnsweredAgain) {
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    const auto out = responses();
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[2].psn, first_psn);
    EXPECT_EQ(out[3].psn, first_psn + 1);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
