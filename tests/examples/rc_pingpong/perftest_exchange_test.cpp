// perftest's exchange (perftest_exchange.hpp) against a perftest peer the test plays: its
// messages written by hand from perftest 4.5-0.17's perftest_communication.c (the version
// string of configure.ac's AC_INIT, hton_int'd sizes, sprintf'd MTU and KEY_PRINT_FMT_GID
// records, the bandwidth report in network order), all of them put in the socket first,
// since a lock-step peer's messages do not depend on ours; then what this side wrote is
// read back and compared whole.
#include "perftest_exchange.hpp"

#include <gtest/gtest.h>

#include "../../bootstrap/connected.hpp"

namespace rc_pingpong::perftest {
namespace {

using namespace std::chrono_literals;
using rig::test::bytes;
using rig::test::connected;
using rig::test::put;
using rig::test::text_of;

std::string with_nul(std::string_view s) { return std::string(s) + '\0'; }

// rxe's QP in the guest as ib_read_bw's server describes it: out_reads 128 (rxe's
// max_qp_rd_atom), its buffer at 0x55d0c4a6b000, GID ::ffff:10.77.0.2.
const std::string rxe_record = with_nul(
    "0000:0080:000011:5e2a1f:0000151e:000055d0c4a6b000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:");
const QpRecord rxe{0, 0x80, 0x11, 0x5e2a1f, 0x151e, 0x55d0c4a6b000, rig::bnxt::ipv4_gid(10, 77, 0, 2), 0};
// rig's side.
const QpRecord rig_qp{0, 16, 0x2, 0x6ef362, 0x100, 0x7f0000001000, rig::bnxt::ipv4_gid(10, 77, 0, 1), 0};
const std::string rig_record = with_nul(
    "0000:0010:000002:6ef362:00000100:00007f0000001000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:01:00000000:");

const std::string version_606 = std::string("6.06") + std::string(12, '\0');
const std::string page_4096("\x00\x00\x10\x00", 4), page_16384("\x00\x00\x40\x00", 4), line_64("\x00\x00\x00\x40", 4);
const std::string mtu_1024("3\0", 2), mtu_512("2\0", 2);
const std::string done("done\0", 5);

std::string read_all(rig::bootstrap::Stream& s, std::size_t n) {
    std::string out(n, '\0');
    auto r = s.read(std::as_writable_bytes(std::span(out)), 1s, "what the side under test wrote");
    EXPECT_TRUE(r) << r.error();
    return out;
}

TEST(PerftestRecord, EncodesAsKeyPrintFmtGid) {
    EXPECT_EQ(rxe_record.size(), 108u);
    EXPECT_EQ(text_of(encode(rxe)), rxe_record);
    EXPECT_EQ(text_of(encode(rig_qp)), rig_record);
}

TEST(PerftestRecord, DecodesRxesRecord) {
    auto r = decode_record(bytes(rxe_record));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(*r, rxe);
}

TEST(PerftestRecord, ShortRecordIsAnError) {
    EXPECT_EQ(decode_record(bytes(rxe_record.substr(0, 59))).error(), "the remote QP record is 59 bytes, not 108");
}

TEST(PerftestRecord, NonHexRkeyIsAnErrorNamingTheByte) {
    std::string r = rxe_record;
    r[30] = 'x';
    EXPECT_EQ(decode_record(bytes(r)).error(),
              "byte 30 of the remote QP record is 'x' (0x78), not a hex digit of the rkey");
}

TEST(PerftestRecord, GidWithoutItsColonsIsAnError) {
    std::string r = rxe_record;
    r[97] = '.';
    EXPECT_EQ(decode_record(bytes(r)).error(), "byte 97 of the remote QP record is '.' (0x2e), not ':'");
}

TEST(PerftestRecord, RecordWithoutItsNulIsAnError) {
    std::string r = rxe_record;
    r[107] = ':';
    EXPECT_EQ(decode_record(bytes(r)).error(),
              "byte 107 of the remote QP record is ':' (0x3a), not the NUL that ends it");
}

TEST(PerftestVersion, IsSixteenBytesNulPadded) {
    EXPECT_EQ(text_of(encode_version("6.06")), version_606);
    auto v = decode_version(bytes(version_606));
    ASSERT_TRUE(v) << v.error();
    EXPECT_EQ(v->text, "6.06");
    EXPECT_DOUBLE_EQ(v->number, 6.06);
}

TEST(PerftestVersion, TextThatIsNoNumberIsAnError) {
    EXPECT_EQ(decode_version(bytes(std::string("v6") + std::string(14, '\0'))).error(),
              "the version \"v6\" does not start with a number");
}

TEST(PerftestMtu, IsTheIbvMtuDigitAndNul) {
    EXPECT_EQ(text_of(encode_mtu(rig::bnxt::Mtu::Mtu1024)), mtu_1024);
    EXPECT_EQ(text_of(encode_mtu(rig::bnxt::Mtu::Mtu4096)), std::string("5\0", 2));
    EXPECT_EQ(*decode_mtu(bytes(mtu_512)), rig::bnxt::Mtu::Mtu512);
}

TEST(PerftestMtu, OtherBytesAreAnError) {
    EXPECT_EQ(decode_mtu(bytes(std::string("7\0", 2))).error(),
              "the MTU (0x37 0x00) is not an ibv_mtu from \"1\" (256) to \"5\" (4096) with its NUL");
    EXPECT_EQ(decode_mtu(bytes("31")).error(),
              "the MTU (0x33 0x31) is not an ibv_mtu from \"1\" (256) to \"5\" (4096) with its NUL");
}

TEST(PerftestSession, OlderPeerIsRefused) {
    auto c = connected();
    put(c.server, std::string("5.60") + std::string(12, '\0'));
    Session client(c.client, Side::Client, 1s);
    EXPECT_EQ(client.versions().error(),
              c.client.peer() + ": speaks perftest 5.60; perftest is not compatible with versions older than 5.70");
}

TEST(PerftestSession, PeerClosingMidMessageIsAnError) {
    auto c = connected();
    put(c.client, version_606 + page_4096.substr(0, 2));
    c.client.close();
    Session server(c.server, Side::Server, 1s);
    ASSERT_TRUE(server.versions());
    EXPECT_EQ(server.sys_data({}).error(),
              c.server.peer() + ": closed the connection after 2 of the 4 bytes of the peer's cycle buffer size");
}

// ib_send_bw's client (rig) against its server (perftest): the order of send_bw.c main.
TEST(PerftestSession, SendBwClientRunsSendBwsOrder) {
    auto c = connected();
    put(c.server, version_606 + page_16384 + line_64 + mtu_512 + rxe_record + rxe_record + rxe_record + rxe_record);
    put(c.server, rxe_record + done);
    Session client(c.client, Side::Client, 1s);
    std::vector<std::string> steps;
    auto agreed = client.setup(
        Program::SendBw, {}, rig::bnxt::Mtu::Mtu1024,
        [&](const Session::Agreed& a) -> rig::Result<QpRecord> {
            steps.push_back("record");
            EXPECT_EQ(a.sys, (SysData{16384, 64}));    // the larger cycle buffer
            EXPECT_EQ(a.mtu, rig::bnxt::Mtu::Mtu512);  // the smaller MTU
            EXPECT_EQ(a.peer.text, "6.06");
            return rig_qp;
        },
        [&](const Session::Agreed& a) -> rig::Result<void> {
            steps.push_back("connect");
            EXPECT_EQ(a.remote, rxe);
            // Written so far: version, cycle buffer, cache line, MTU, the first record.
            EXPECT_EQ(read_all(c.server, 134), version_606 + page_4096 + line_64 + mtu_1024 + rig_record);
            EXPECT_FALSE(*c.server.readable(0ms));
            return {};
        },
        [&]() -> rig::Result<void> {
            steps.push_back("prepare");
            EXPECT_EQ(read_all(c.server, 216), rig_record + rig_record);  // after RTR/RTS; the one printed as remote
            EXPECT_FALSE(*c.server.readable(0ms));
            return {};
        });
    ASSERT_TRUE(agreed) << agreed.error();
    EXPECT_EQ(agreed->remote, rxe);
    auto report = client.finish(Program::SendBw, rig_qp);
    ASSERT_TRUE(report) << report.error();
    EXPECT_EQ(*report, BwReport{});
    EXPECT_EQ(steps, (std::vector<std::string>{"record", "connect", "prepare"}));
    EXPECT_EQ(read_all(c.server, 108 + 108 + 5), rig_record + rig_record + done);  // before the data; close
}

// ib_read_bw's server (rig) against its client (perftest): the order of read_bw.c main,
// the client's bandwidth report included.
TEST(PerftestSession, ReadBwServerRunsReadBwsOrderAndTakesTheClientsReport) {
    auto c = connected();
    const std::string report = std::string("\x00\x00\x00\x00\x00\x01\x00\x00", 8)     // size 65536
                               + std::string("\x00\x00\x00\x00\x00\x00\x03\xe8", 8)   // iters 1000
                               + std::string("\x40\x93\x4a\x00\x00\x00\x00\x00", 8)   // bw_peak 1234.5
                               + std::string("\x40\x8f\x42\x00\x00\x00\x00\x00", 8)   // bw_avg 1000.25
                               + std::string("\x3f\x90\x62\x4d\xd2\xf1\xa9\xfc", 8);  // msgRate_avg 0.016
    put(c.client, version_606 + page_4096 + line_64 + mtu_1024 + rxe_record + rxe_record + rxe_record);
    put(c.client, rxe_record + report + rxe_record + done);
    Session server(c.server, Side::Server, 1s);
    int connects = 0;
    auto agreed = server.setup(
        Program::ReadBw, {}, rig::bnxt::Mtu::Mtu4096,
        [](const Session::Agreed&) -> rig::Result<QpRecord> { return rig_qp; },
        [&](const Session::Agreed& a) -> rig::Result<void> {
            ++connects;
            EXPECT_EQ(a.mtu, rig::bnxt::Mtu::Mtu1024);
            EXPECT_EQ(a.remote.out_reads, 0x80);
            return {};
        },
        []() -> rig::Result<void> {
            ADD_FAILURE() << "ib_read_bw has no prepare step";
            return {};
        });
    ASSERT_TRUE(agreed) << agreed.error();
    EXPECT_EQ(connects, 1);
    auto theirs = server.finish(Program::ReadBw, rig_qp, BwReport{65536, 1000, 0, 0, 0});
    ASSERT_TRUE(theirs) << theirs.error();
    EXPECT_EQ(*theirs, (BwReport{65536, 1000, 1234.5, 1000.25, 0.016}));
    const std::string zeros(8, '\0');
    EXPECT_EQ(read_all(c.client, 16 + 4 + 4 + 2 + 5 * 108 + 5 * 8 + 5),
              version_606 + page_4096 + line_64 + std::string("5\0", 2) + rig_record + rig_record + rig_record +
                  rig_record + std::string("\x00\x00\x00\x00\x00\x01\x00\x00", 8) +
                  std::string("\x00\x00\x00\x00\x00\x00\x03\xe8", 8) + zeros + zeros + zeros + rig_record + done);
}

TEST(PerftestSession, PeerOfTheOtherIpVersionIsRefused) {
    auto c = connected();
    std::string link_local = rxe_record;
    link_local.replace(50, 47, "fe:80:00:00:00:00:00:00:50:54:00:ff:fe:00:00:02");
    put(c.server, version_606 + page_4096 + line_64 + mtu_1024 + link_local);
    Session client(c.client, Side::Client, 1s);
    auto agreed = client.setup(
        Program::SendBw, {}, rig::bnxt::Mtu::Mtu1024,
        [](const Session::Agreed&) -> rig::Result<QpRecord> { return rig_qp; },
        [](const Session::Agreed&) -> rig::Result<void> {
            ADD_FAILURE() << "connected to a peer of the other IP version";
            return {};
        });
    EXPECT_EQ(agreed.error(),
              c.client.peer() +
                  ": its GID fe80::5054:ff:fe00:2 is not of the IP version of this side's ::ffff:10.77.0.1 "
                  "(perftest: \"Found Incompatibility issue with GID types\")");
}

TEST(PerftestSession, CloseTakesAPeerThatResetsAfterItsDone) {
    auto c = connected();
    put(c.server, rxe_record + done);
    c.server.close();  // as perftest: our record and "done" reach a closed socket, which resets
    Session client(c.client, Side::Client, 1s);
    auto r = client.close(rig_qp);
    EXPECT_TRUE(r) << r.error();
}

TEST(PerftestSession, CloseRefusesOtherBytesThanDone) {
    auto c = connected();
    put(c.server, rxe_record + "bye!\n");
    Session client(c.client, Side::Client, 1s);
    EXPECT_EQ(client.close(rig_qp).error(), c.client.peer() + ": sent other bytes than \"done\\0\" at the end");
}

}  // namespace
}  // namespace rc_pingpong::perftest
