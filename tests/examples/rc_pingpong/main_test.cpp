// rig_rc_pingpong run as a user runs it: as the client of a server the test plays with
// bytes written by hand from rdma-core v44.0's pp_server_exch_dest (it reads the client's
// 52-byte record, answers with its own, and takes "done\0"), and as server and client of
// each other, two processes whose ports are cabled by UDP datagrams on 127.0.0.1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <regex>

#include "../../support/run.hpp"
#include "processes.hpp"
#include "rig/bootstrap/stream.hpp"

namespace {

using namespace std::chrono_literals;

TEST(RcPingpong, ClientExchangesAddressesWithAnRcPingpongServer) {
    auto listener = rig::bootstrap::Listener::listen({"127.0.0.1", 0});
    ASSERT_TRUE(listener) << listener.error();
    const std::string port = std::to_string(listener->port());
    auto program = std::async(std::launch::async, [&] {
        return rig::test::run(RC_PINGPONG_BINARY, {"-p", port, "-g", "1", "-s", "64", "127.0.0.1"});
    });
    auto stream = listener->accept(30s);
    ASSERT_TRUE(stream) << stream.error();
    std::string record(52, '\0');
    ASSERT_TRUE(stream->read(std::as_writable_bytes(std::span(record)), 30s, "the client's record"));
    // LID 0, a QPN and PSN of 6 hex digits, GID[1] = ::ffff:10.77.0.1, the NUL.
    EXPECT_THAT(record.substr(0, 51),
                testing::MatchesRegex("0000:[0-9a-f]{6}:[0-9a-f]{6}:00000000000000000000ffff0a4d0001"));
    EXPECT_EQ(record[51], '\0');
    const std::string answer("0000:000011:a1b2c3:00000000000000000000ffff0a4d0002\0", 52);
    ASSERT_TRUE(stream->write(std::as_bytes(std::span(answer)), 5s, "the server's record"));
    std::string done(5, '\0');
    ASSERT_TRUE(stream->read(std::as_writable_bytes(std::span(done)), 30s, "done"));
    EXPECT_EQ(done, std::string("done\0", 5));
    const auto result = program.get();
    // The client learns the server's MAC by ARP before RTR, as rxe does; without --cable
    // no one can answer, and it says so as rc_pingpong says a failed RTR.
    EXPECT_EQ(result.status, 1);
    const std::string qpn = "0x" + record.substr(5, 6), psn = "0x" + record.substr(12, 6);
    EXPECT_EQ(
        result.out,
        "  local address:  LID 0x0000, QPN " + qpn + ", PSN " + psn +
            ", GID ::ffff:10.77.0.1\n"
            "  remote address: LID 0x0000, QPN 0x000011, PSN 0xa1b2c3, GID ::ffff:10.77.0.2\n"
            "Failed to modify QP to RTR: the peer's MAC: bnxt model: resolve ::ffff:10.77.0.2: the port is on no cable\n");
}

struct Case {
    std::uint32_t size;
    std::uint32_t iters;
};

class Pingpong : public testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(RcPingpong, Pingpong, testing::Values(Case{64, 1000}, Case{4096, 1000}, Case{1048576, 20}),
                         [](const testing::TestParamInfo<Case>& c) { return std::to_string(c.param.size) + "Bytes"; });

// Server (10.77.0.1) and client (10.77.0.2) run the whole ping-pong: each prints the
// other's QPN and PSN as its remote address and rc_pingpong's closing lines for
// 2 x size x iters bytes.
TEST_P(Pingpong, TwoProcessesCompleteOverTheDatagramCable) {
    const auto [size, iters] = GetParam();
    const std::string tcp = std::to_string(rig::test::free_port(SOCK_STREAM));
    const std::string a = std::to_string(rig::test::free_port(SOCK_DGRAM)),
                      b = std::to_string(rig::test::free_port(SOCK_DGRAM));
    const std::vector<std::string> common = {
        "-p", tcp, "-g", "1", "-m", "1024", "-s", std::to_string(size), "-n", std::to_string(iters)};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> args = common;
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    auto server = std::async(std::launch::async, [&] {
        return rig::test::run(RC_PINGPONG_BINARY, with({"--cable", a + ":127.0.0.1:" + b}));
    });
    rig::test::wait_listening(static_cast<std::uint16_t>(std::stoi(tcp)), 30s);
    const auto client =
        rig::test::run(RC_PINGPONG_BINARY, with({"--cable", b + ":127.0.0.1:" + a, "--ip", "10.77.0.2", "127.0.0.1"}));
    const auto served = server.get();
    ASSERT_EQ(served.status, 0) << served.out;
    ASSERT_EQ(client.status, 0) << client.out;

    const std::regex lines(
        "  local address:  LID 0x0000, QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6}), GID ::ffff:10\\.77\\.0\\.([12])\n"
        "  remote address: LID 0x0000, QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6}), GID ::ffff:10\\.77\\.0\\.([12])\n"
        "([0-9]+) bytes in [0-9]+\\.[0-9]{2} seconds = [0-9]+\\.[0-9]{2} Mbit/sec\n"
        "([0-9]+) iters in [0-9]+\\.[0-9]{2} seconds = [0-9]+\\.[0-9]{2} usec/iter\n");
    std::smatch s, c;
    ASSERT_TRUE(std::regex_match(served.out, s, lines)) << served.out;
    ASSERT_TRUE(std::regex_match(client.out, c, lines)) << client.out;
    EXPECT_EQ(s[3], "1");
    EXPECT_EQ(s[6], "2");
    EXPECT_EQ(c[3], "2");
    EXPECT_EQ(c[6], "1");
    EXPECT_EQ(s[4], c[1]);  // the server's remote QPN and PSN are the client's own
    EXPECT_EQ(s[5], c[2]);
    EXPECT_EQ(c[4], s[1]);
    EXPECT_EQ(c[5], s[2]);
    for (const std::smatch* m : {&s, &c}) {
        EXPECT_EQ((*m)[7], std::to_string(2ull * size * iters));
        EXPECT_EQ((*m)[8], std::to_string(iters));
    }
}

TEST(RcPingpong, BadMtuPrintsTheReasonAndUsage) {
    const auto result = rig::test::run(RC_PINGPONG_BINARY, {"-m", "1000"});
    EXPECT_EQ(result.status, 1);
    EXPECT_THAT(result.out, testing::StartsWith("rig_rc_pingpong: -m 1000: not 256, 512, 1024, 2048 or 4096\n"));
    EXPECT_THAT(result.out, testing::HasSubstr("--cable"));
}

}  // namespace
