// rig_rc_pingpong run as a user runs it, as the client of a server the test plays with
// bytes written by hand from rdma-core v44.0's pp_server_exch_dest: it reads the client's
// 52-byte record, answers with its own, and takes "done\0".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "../../support/run.hpp"
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
    EXPECT_THAT(record.substr(0, 51), testing::MatchesRegex("0000:[0-9a-f]{6}:[0-9a-f]{6}:00000000000000000000ffff0a4d0001"));
    EXPECT_EQ(record[51], '\0');
    const std::string answer("0000:000011:a1b2c3:00000000000000000000ffff0a4d0002\0", 52);
    ASSERT_TRUE(stream->write(std::as_bytes(std::span(answer)), 5s, "the server's record"));
    std::string done(5, '\0');
    ASSERT_TRUE(stream->read(std::as_writable_bytes(std::span(done)), 30s, "done"));
    EXPECT_EQ(done, std::string("done\0", 5));
    const auto result = program.get();
    EXPECT_EQ(result.status, 1);  // the ping-pong itself is not there yet
    const std::string qpn = "0x" + record.substr(5, 6), psn = "0x" + record.substr(12, 6);
    EXPECT_EQ(result.out, "  local address:  LID 0x0000, QPN " + qpn + ", PSN " + psn + ", GID ::ffff:10.77.0.1\n"
                          "  remote address: LID 0x0000, QPN 0x000011, PSN 0xa1b2c3, GID ::ffff:10.77.0.2\n"
                          "rig_rc_pingpong: stopping after the exchange: the ping-pong of SENDs needs the port's datagram cable "
                          "and the resolution of the peer's MAC, which this build does not have yet\n");
}

TEST(RcPingpong, BadMtuPrintsTheReasonAndUsage) {
    const auto result = rig::test::run(RC_PINGPONG_BINARY, {"-m", "1000"});
    EXPECT_EQ(result.status, 1);
    EXPECT_THAT(result.out, testing::StartsWith("rig_rc_pingpong: -m 1000: not 256, 512, 1024, 2048 or 4096\n"));
    EXPECT_THAT(result.out, testing::HasSubstr("--cable"));
}

}  // namespace
