// The model's frames and the port's checks of what it receives (nic/bnxt/sim/src/packet.cpp,
// frames.cpp): frames read off a capture of a Wire against bytes assembled here field by
// field from IBA annex A17 (RoCEv2), A16 (RoCEv1), RFC 791 (IPv4), RFC 768 (UDP) and RFC 8200
// (IPv6). The ICRCs are the values scapy's RoCE layer (scapy.contrib.roce BTH.compute_icrc)
// computes for the same IPv4 frames, and for IPv6 and RoCEv1 (which scapy does not do) the
// values of Python's zlib.crc32 over rxe_icrc.c's masked bytes; the IPv6 UDP checksums are
// scapy's. Then each reason the port drops a frame, one counter each (RxCounters), from a
// frame of the capture changed in that one respect.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "pair.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {
namespace {

// "02 00 00 ..." as bytes.
Bytes hex(std::string_view text) {
    Bytes out;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == ' ') {
            ++i;
            continue;
        }
        out.push_back(static_cast<std::byte>(std::stoul(std::string(text.substr(i, 2)), nullptr, 16)));
        i += 2;
    }
    return out;
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

constexpr Gid fd93_1{0xFD, 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr Gid fd93_2{0xFD, 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr Gid fe80_1{0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr Gid fe80_2{0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

class FramesTest : public Pair {
protected:
    // A and B of network type `network` (MODIFY_QP), at `ga` and `gb`; A sends 5 bytes
    // (PadCnt 3) into a receive on B, which acknowledges. The two frames of the capture.
    std::vector<Bytes> send_five(std::uint8_t network, const Gid& ga, const Gid& gb) {
        rig::test::TempDir dir;
        a.network = b.network = network;
        a.gid = ga;
        b.gid = gb;
        open();
        EXPECT_TRUE(wire->capture(dir.path() / "wire.pcap"));
        a.bus.poke(abuf, five);
        b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 5}});
        settle(a, b);
        wire->stop_capture();
        EXPECT_EQ(b.poll(bcq)->length(), 5u);
        EXPECT_TRUE(b.bus.peek(bbuf, 5) == five);
        std::vector<Bytes> frames;
        for (auto& f : rig::test::read_pcap(dir.path() / "wire.pcap").frames) frames.push_back(f.bytes);
        return frames;
    }
    const Bytes five = pattern(5, 3);  // 56 3f 4d d1 1a
};

// Both QPs are QPN 2 and A's first PSN 74274 (0x012222); udp_source_port(0, 2, 2) is
// 0xC000 | 2 * 2, Linux's rdma_get_udp_sport for them.
TEST_F(FramesTest, Ipv4SendOnlyIsEthernetIpv4UdpBthPayloadPadAndIcrcFieldByField) {
    const auto frames = send_five(2, a.gid, b.gid);
    ASSERT_EQ(frames.size(), 2u);
    const Bytes expected = cat({
        hex("02 00 00 00 00 02  02 00 00 00 00 01  08 00"),  // B's MAC, A's MAC, IPv4
        // version 4 IHL 5, TOS 0, total length 52, identification 0, DF, TTL 64 (the hop
        // limit), UDP, checksum 0x26b7 (~(0x4500+0x0034+0x4000+0x4011+0x0a00+0x0001+0x0a00+0x0002)),
        // 10.0.0.1, 10.0.0.2 (the IPv4-mapped GIDs)
        hex("45 00 00 34 00 00 40 00 40 11 26 b7 0a 00 00 01 0a 00 00 02"),
        hex("c0 04 12 b7 00 20 00 00"),  // source port 0xC004, 4791, length 32, no checksum
        // SEND ONLY; SE 0, MigReq 0, PadCnt 3, TVer 0; P_Key; resv8a, QP 2; AckReq, PSN
        hex("04 30 ff ff 00 00 00 02 80 01 22 22"), five,
        hex("00 00 00"),     // the pad
        hex("71 ff 1f 57"),  // scapy's ICRC, least significant byte first
    });
    EXPECT_EQ(frames[0], expected);
}

TEST_F(FramesTest, Ipv4AcknowledgementCarriesAethAndTheIcrcScapyComputes) {
    const auto frames = send_five(2, a.gid, b.gid);
    ASSERT_EQ(frames.size(), 2u);
    const Bytes expected = cat({
        hex("02 00 00 00 00 01  02 00 00 00 00 02  08 00"),
        hex("45 00 00 30 00 00 40 00 40 11 26 bb 0a 00 00 02 0a 00 00 01"),  // total length 48
        hex("c0 04 12 b7 00 1c 00 00"),
        hex("11 00 ff ff 00 00 00 02 00 01 22 22"),  // ACKNOWLEDGE of PSN 0x012222, no pad
        hex("1f 00 00 01"),                          // AETH: ACK, credits 0x1F (none), MSN 1
        hex("62 dd b8 62"),
    });
    EXPECT_EQ(frames[1], expected);
}

TEST_F(FramesTest, Ipv6SendOnlyCarriesItsUdpChecksumAndTheIcrc) {
    const auto frames = send_five(3, fd93_1, fd93_2);
    ASSERT_EQ(frames.size(), 2u);
    const Bytes expected = cat({
        hex("02 00 00 00 00 02  02 00 00 00 00 01  86 dd"),
        // version 6, traffic class 0, flow label 0; payload length 32, UDP, hop limit 64
        hex("60 00 00 00 00 20 11 40"),
        hex("fd 93 00 00 00 00 00 00 00 00 00 00 00 00 00 01"),
        hex("fd 93 00 00 00 00 00 00 00 00 00 00 00 00 00 02"),
        hex("c0 04 12 b7 00 20 b4 34"),  // the UDP checksum scapy computes (RFC 8200 §8.1)
        hex("04 30 ff ff 00 00 00 02 80 01 22 22"),
        five,
        hex("00 00 00"),
        hex("ee 9e 2a 8e"),
    });
    EXPECT_EQ(frames[0], expected);
}

// RFC 8200 §8.1, RFC 768, RFC 1071, computed here: the pseudo-header (source and
// destination address, UDP length, next header 17) and the UDP segment of an IPv6 frame,
// its checksum field included, sum to 0xFFFF; and the field is not zero.
bool udp_checksum_adds_up(const Bytes& f) {
    auto word = [&](std::size_t at) {
        return std::to_integer<std::uint32_t>(f[at]) << 8 |
               (at + 1 < f.size() ? std::to_integer<std::uint32_t>(f[at + 1]) : 0);
    };
    std::uint32_t sum = 0;
    for (std::size_t at = 14 + 8; at < 14 + 40; at += 2) sum += word(at);
    sum += static_cast<std::uint32_t>(f.size() - 54) + 17;
    for (std::size_t at = 54; at < f.size(); at += 2) sum += word(at);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return sum == 0xFFFF && word(60) != 0;
}

// What the model sends over IPv6, a READ's request and responses and a SEND's ACK alike,
// carries a UDP checksum that adds up.
TEST_F(FramesTest, EveryIpv6FrameCarriesAUdpChecksumThatAddsUp) {
    rig::test::TempDir dir;
    a.network = b.network = 3;
    a.gid = fd93_1;
    b.gid = fd93_2;
    open();
    ASSERT_TRUE(wire->capture(dir.path() / "wire.pcap"));
    b.bus.poke(bbuf, pattern(3001, 5));
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 3001}}, 0, bbuf, bkey);
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 7}});
    settle(a, b);
    wire->stop_capture();
    const auto frames = rig::test::read_pcap(dir.path() / "wire.pcap").frames;
    ASSERT_EQ(frames.size(), 6u);  // READ request, 3 responses, SEND, ACK
    for (const auto& f : frames) EXPECT_TRUE(udp_checksum_adds_up(f.bytes)) << f.bytes.size() << "-byte frame";
    EXPECT_EQ(a.drain(acq).size(), 2u);
}

// A zero or wrong UDP checksum over IPv6 is a bad checksum (RFC 8200 §8.1: a receiver
// discards zero), counted with the IP checksum; the ICRC does not cover the field, so
// only the checksum tells.
TEST_F(FramesTest, Ipv6UdpChecksumZeroOrWrongIsDroppedAsABadChecksum) {
    const Bytes send = send_five(3, fd93_1, fd93_2)[0];
    ASSERT_TRUE(udp_checksum_adds_up(send));
    const RxCounters before = b.nic.rx_counters();
    Bytes zero = send;
    zero[60] = zero[61] = std::byte{0};
    Bytes wrong = send;
    wrong[61] ^= std::byte{0x01};
    for (const Bytes* f : {&zero, &wrong}) {
        b.faults.receive(*f);
        settle(a, b);
    }
    EXPECT_EQ(b.nic.rx_counters().bad_ip_checksum, before.bad_ip_checksum + 2);
    EXPECT_EQ(b.nic.rx_counters().delivered, before.delivered);
    b.faults.receive(send);  // as it came: taken (a duplicate by now)
    settle(a, b);
    EXPECT_EQ(b.nic.rx_counters().delivered, before.delivered + 1);
}

TEST_F(FramesTest, RoceV1SendOnlyIsEthernetGrhAndBthOnlyForNetworkTypeZero) {
    const auto frames = send_five(0, fe80_1, fe80_2);
    ASSERT_EQ(frames.size(), 2u);
    const Bytes expected = cat({
        hex("02 00 00 00 00 02  02 00 00 00 00 01  89 15"),
        // GRH: IPVer 6, TClass 0, FlowLabel 0; PayLen 24 (BTH to ICRC), NxtHdr 0x1B, HopLmt 64
        hex("60 00 00 00 00 18 1b 40"),
        hex("fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 01"),
        hex("fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 02"),
        hex("04 30 ff ff 00 00 00 02 80 01 22 22"),
        five,
        hex("00 00 00"),
        hex("af 7d 0d 3a"),
    });
    EXPECT_EQ(frames[0], expected);
}

TEST_F(FramesTest, IcrcOfACapturedFrameIsTheOneItCarries) {
    for (const auto& f : send_five(2, a.gid, b.gid)) {
        const std::uint32_t carried = std::to_integer<std::uint32_t>(f[f.size() - 4]) |
                                      std::to_integer<std::uint32_t>(f[f.size() - 3]) << 8 |
                                      std::to_integer<std::uint32_t>(f[f.size() - 2]) << 16 |
                                      std::to_integer<std::uint32_t>(f[f.size() - 1]) << 24;
        EXPECT_EQ(testing::icrc(f), carried);
    }
    EXPECT_FALSE(testing::icrc(hex("02 00 00 00 00 02  02 00 00 00 00 01  08 06")));        // ARP
    EXPECT_FALSE(testing::icrc(hex("02 00 00 00 00 02  02 00 00 00 00 01  08 00 45 00")));  // short
}

// ---- what the port drops, one counter each ----

void put_be16(Bytes& f, std::size_t at, std::uint16_t v) {
    f[at] = static_cast<std::byte>(v >> 8);
    f[at + 1] = static_cast<std::byte>(v & 0xFF);
}

// RFC 1071 over the IPv4 header at 14, written at 24.
void fix_ip_checksum(Bytes& f) {
    put_be16(f, 24, 0);
    std::uint32_t sum = 0;
    for (std::size_t i = 14; i < 34; i += 2)
        sum += std::to_integer<unsigned>(f[i]) << 8 | std::to_integer<unsigned>(f[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    put_be16(f, 24, static_cast<std::uint16_t>(~sum));
}

void fix_icrc(Bytes& f) {
    const std::uint32_t c = testing::icrc(f).value();
    for (unsigned i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<std::byte>(c >> (8 * i));
}

class RxTest : public Pair {
protected:
    void SetUp() override {
        rig::test::TempDir dir;
        open();
        extra = b.create_qp(bcq, bcq, 16, 16);  // stays in RESET
        ASSERT_TRUE(wire->capture(dir.path() / "wire.pcap"));
        a.bus.poke(abuf, pattern(64, 9));
        b.post_recv(bqp, 1, {{bbuf, bkey, 4096}});
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
        settle(a, b);
        wire->stop_capture();
        ASSERT_EQ(b.poll(bcq)->length(), 64u);
        ASSERT_EQ(a.poll(acq)->status(), 0);
        const auto c = rig::test::read_pcap(dir.path() / "wire.pcap");
        ASSERT_EQ(c.frames.size(), 2u);
        send = c.frames[0].bytes;  // A -> B: SEND ONLY, PSN 0x012222
        ack = c.frames[1].bytes;   // B -> A
        ASSERT_EQ(send.size(), 14u + 20 + 8 + 12 + 64 + 4);
        // The same SEND again, at the next PSN, is what B would take next.
        put_be16(send, 52, 0x2223);
        fix_icrc(send);
        b.post_recv(bqp, 2, {{bbuf, bkey, 4096}});
        b.bus.poke(bbuf, Bytes(4096, std::byte{0xEE}));
        settle(a, b);
        before = b.nic.rx_counters();
    }

    // Feeds `frame` to B; expects `field` (and nothing else) to have grown by one, and B to
    // have written nothing: no CQE, the posted receive's buffer as it was.
    void expect_dropped(const Bytes& frame, std::uint64_t RxCounters::*field, const char* why) {
        b.faults.receive(frame);
        settle(a, b);
        RxCounters after = b.nic.rx_counters();
        EXPECT_EQ(after.*field, before.*field + 1) << why;
        after.*field = before.*field;
        EXPECT_EQ(std::memcmp(&after, &before, sizeof after), 0) << why << ": another counter moved";
        EXPECT_FALSE(b.poll(bcq)) << why;
        EXPECT_TRUE(b.bus.peek(bbuf, 4096) == Bytes(4096, std::byte{0xEE})) << why;
        before = b.nic.rx_counters();
    }

    Qp extra;
    Bytes send, ack;
    RxCounters before;
};

TEST_F(RxTest, TheUnchangedFrameIsDelivered) {
    b.faults.receive(send);
    settle(a, b);
    EXPECT_EQ(b.nic.rx_counters().delivered, before.delivered + 1);
    const auto cqe = b.poll(bcq);
    ASSERT_TRUE(cqe);
    EXPECT_EQ(cqe->length(), 64u);
    EXPECT_TRUE(b.bus.peek(bbuf, 64) == pattern(64, 9));
}

TEST_F(RxTest, WrongIcrcIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 20 + 8 + 12 + 10] ^= std::byte{0x01};  // one payload bit
    expect_dropped(f, &RxCounters::bad_icrc, "payload bit");
    f = send;
    f.back() ^= std::byte{0x80};  // one ICRC bit
    expect_dropped(f, &RxCounters::bad_icrc, "ICRC bit");
    f = send;
    f[14 + 20 + 8 + 9] ^= std::byte{0x01};  // the PSN: a header under the ICRC
    expect_dropped(f, &RxCounters::bad_icrc, "PSN bit");
}

TEST_F(RxTest, VariantFieldsAreOutsideTheIcrc) {
    // TTL and TOS are masked in the ICRC: changed (and the IP checksum mended) the frame
    // is still the sender's.
    Bytes f = send;
    f[14 + 8] = std::byte{3};
    f[14 + 1] = std::byte{0x02};
    fix_ip_checksum(f);
    b.faults.receive(f);
    settle(a, b);
    EXPECT_EQ(b.nic.rx_counters().delivered, before.delivered + 1);
    EXPECT_TRUE(b.poll(bcq));
}

TEST_F(RxTest, WrongIpv4ChecksumIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 8] = std::byte{63};  // the TTL, outside the ICRC, so only the IP checksum is wrong
    expect_dropped(f, &RxCounters::bad_ip_checksum, "TTL changed");
}

TEST_F(RxTest, UdpPortOtherThan4791IsDroppedAndCounted) {
    Bytes f = send;
    put_be16(f, 14 + 20 + 2, 4792);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::bad_udp_port, "port 4792");
}

TEST_F(RxTest, TruncatedFramesAreDroppedAndCounted) {
    for (std::size_t n : {0u, 13u, 14u, 33u, 41u, 60u, static_cast<unsigned>(send.size() - 1)}) {
        const Bytes f(send.begin(), send.begin() + static_cast<std::ptrdiff_t>(n));
        expect_dropped(f, &RxCounters::truncated, ("first " + std::to_string(n) + " bytes").c_str());
    }
    // Lengths that all agree, but too short for BTH and ICRC.
    Bytes f(send.begin(), send.begin() + 14 + 20 + 8 + 8);
    put_be16(f, 14 + 2, 20 + 8 + 8);
    fix_ip_checksum(f);
    put_be16(f, 14 + 20 + 4, 8 + 8);
    expect_dropped(f, &RxCounters::truncated, "8 bytes of UDP payload");
}

TEST_F(RxTest, LengthsThatDisagreeAreDroppedAndCounted) {
    Bytes f = send;
    f.insert(f.end(), 4, std::byte{0});  // longer than the IP total length
    expect_dropped(f, &RxCounters::bad_length, "4 bytes beyond the IP length");
    f = send;
    put_be16(f, 14 + 20 + 4, 8 + 12 + 64);  // UDP length 4 short of the IP payload
    expect_dropped(f, &RxCounters::bad_length, "UDP length");
    f = send;
    f[14 + 0] = std::byte{0x44};  // IHL 4
    fix_ip_checksum(f);
    expect_dropped(f, &RxCounters::bad_length, "IHL 4");
    // PadCnt 3 on an acknowledgement, which has no payload to pad.
    f = ack;
    f[14 + 20 + 8 + 1] = std::byte{0x30};
    for (int i = 0; i < 6; ++i)  // to B: the ACK's addresses turned around
        std::swap(f[i], f[6 + i]);
    for (int i = 0; i < 4; ++i) std::swap(f[26 + i], f[30 + i]);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::bad_length, "PadCnt 3 without payload");
}

TEST_F(RxTest, AnotherDestinationMacIsDroppedAndCounted) {
    Bytes f = send;
    f[5] = std::byte{0x07};  // Ethernet is outside the ICRC
    expect_dropped(f, &RxCounters::wrong_mac, "MAC 02:00:00:00:00:07");
}

TEST_F(RxTest, AnotherDestinationAddressIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 19] = std::byte{9};  // 10.0.0.9
    fix_ip_checksum(f);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::wrong_address, "10.0.0.9");
}

TEST_F(RxTest, UnknownQpIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 20 + 8 + 7] = std::byte{0x99};  // QP 0x99
    fix_icrc(f);
    expect_dropped(f, &RxCounters::unknown_qp, "QP 0x99");
}

TEST_F(RxTest, QpInResetIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 20 + 8 + 7] = static_cast<std::byte>(extra.qpn);
    ASSERT_LT(extra.qpn, 256u);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::unconnected_qp, "QP in RESET");
}

TEST_F(RxTest, SourceTheQpIsNotConnectedToIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 15] = std::byte{7};  // from 10.0.0.7, not A's 10.0.0.1
    fix_ip_checksum(f);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::wrong_source, "from 10.0.0.7");
}

TEST_F(RxTest, AnotherPkeyIsDroppedAndCounted) {
    Bytes f = send;
    put_be16(f, 14 + 20 + 8 + 2, 0x8001);
    fix_icrc(f);
    expect_dropped(f, &RxCounters::wrong_pkey, "P_Key 0x8001");
}

TEST_F(RxTest, OpcodeTheModelDoesNotTakeIsDroppedAndCounted) {
    Bytes f = send;
    f[14 + 20 + 8] = std::byte{0x64};  // UD SEND ONLY
    fix_icrc(f);
    expect_dropped(f, &RxCounters::bad_opcode, "UD SEND ONLY");
}

TEST_F(RxTest, OtherTrafficIsDroppedAsNotRoce) {
    Bytes f = send;
    put_be16(f, 12, 0x88B5);  // IEEE 802 local experimental EtherType
    expect_dropped(f, &RxCounters::not_roce, "EtherType 0x88B5");
    f = send;
    f[14 + 9] = std::byte{6};  // TCP
    fix_ip_checksum(f);
    expect_dropped(f, &RxCounters::not_roce, "TCP");
    f = send;
    put_be16(f, 14 + 6, 0x2000);  // MF: a first fragment
    fix_ip_checksum(f);
    expect_dropped(f, &RxCounters::not_roce, "fragment");
    f = send;
    f[14 + 20 + 8 + 1] = std::byte{0x01};  // TVer 1
    fix_icrc(f);
    expect_dropped(f, &RxCounters::not_roce, "TVer 1");
}

}  // namespace
}  // namespace rig::bnxt::sim::test
