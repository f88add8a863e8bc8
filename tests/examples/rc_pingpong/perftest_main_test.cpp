// rig_perftest run as a user runs it: ib_send_bw and ib_read_bw, server and client of each
// other, two processes whose ports are cabled by UDP datagrams on 127.0.0.1; and its
// command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <regex>

#include "../../support/run.hpp"
#include "processes.hpp"

namespace {

using namespace std::chrono_literals;

struct Run {
    rig::test::Run server, client;
};

Run both(const std::string& test, const std::vector<std::string>& options) {
    const std::string tcp = std::to_string(rig::test::free_port(SOCK_STREAM));
    const std::string a = std::to_string(rig::test::free_port(SOCK_DGRAM)),
                      b = std::to_string(rig::test::free_port(SOCK_DGRAM));
    auto args = [&](std::vector<std::string> more) {
        std::vector<std::string> all = {test, "-p", tcp, "-x", "1"};
        all.insert(all.end(), options.begin(), options.end());
        all.insert(all.end(), more.begin(), more.end());
        return all;
    };
    auto server = std::async(std::launch::async, [&] {
        return rig::test::run(PERFTEST_BINARY, args({"--cable", a + ":127.0.0.1:" + b}));
    });
    rig::test::wait_listening(static_cast<std::uint16_t>(std::stoi(tcp)), 30s);
    auto client =
        rig::test::run(PERFTEST_BINARY, args({"--cable", b + ":127.0.0.1:" + a, "--ip", "10.77.0.2", "127.0.0.1"}));
    return {server.get(), client};
}

// " local address: LID 0000 QPN 0x0002 PSN 0x..." and for ib_read_bw its OUT, RKey and
// VAddr; the GID in decimal bytes; the result row of size and iterations.
const char* const address = " (local|remote) address: LID 0000 QPN (0x[0-9a-f]{4,6}) PSN (0x[0-9a-f]{6})";

TEST(RigPerftest, SendBwCompletesBetweenTwoProcesses) {
    const auto r = both("ib_send_bw", {"-s", "65536", "-n", "200", "-m", "1024"});
    ASSERT_EQ(r.server.status, 0) << r.server.out;
    ASSERT_EQ(r.client.status, 0) << r.client.out;
    for (const auto* out : {&r.server.out, &r.client.out}) {
        EXPECT_THAT(*out, testing::ContainsRegex(std::string("^") + address +
                                                 "\n GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:0[12]\n"));
        EXPECT_THAT(
            *out,
            testing::ContainsRegex(
                "\n 65536      200              [0-9]+\\.[0-9]{2} +[0-9]+\\.[0-9]{2} *\t\t   [0-9]+\\.[0-9]{6}\n"));
    }
    EXPECT_THAT(r.server.out, testing::HasSubstr("GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:01\n remote"));
}

// The client reads the server's region: the server prints the client's report, whose row
// it learnt over TCP; the client's RDMA READs name the rkey and VAddr the server printed.
TEST(RigPerftest, ReadBwCompletesBetweenTwoProcessesAndTheServerPrintsTheClientsReport) {
    const auto r = both("ib_read_bw", {"-s", "65536", "-n", "200", "-m", "1024"});
    ASSERT_EQ(r.server.status, 0) << r.server.out;
    ASSERT_EQ(r.client.status, 0) << r.client.out;
    const std::regex read_line(
        " local address: LID 0000 QPN 0x[0-9a-f]+ PSN 0x[0-9a-f]+ OUT 0x10 RKey (0x[0-9a-f]+) VAddr (0x[0-9a-f]+)\n");
    std::smatch server_keys, client_view;
    ASSERT_TRUE(std::regex_search(r.server.out, server_keys, read_line)) << r.server.out;
    const std::regex remote_line(
        " remote address: LID 0000 QPN 0x[0-9a-f]+ PSN 0x[0-9a-f]+ OUT 0x10 RKey (0x[0-9a-f]+) VAddr (0x[0-9a-f]+)\n");
    ASSERT_TRUE(std::regex_search(r.client.out, client_view, remote_line)) << r.client.out;
    EXPECT_EQ(server_keys[1], client_view[1]);
    EXPECT_EQ(server_keys[2], client_view[2]);
    const std::regex row(
        "\n 65536      200              ([0-9]+\\.[0-9]{2}) +([0-9]+\\.[0-9]{2}) *\t\t   ([0-9]+\\.[0-9]{6})\n");
    std::smatch s, c;
    ASSERT_TRUE(std::regex_search(r.server.out, s, row)) << r.server.out;
    ASSERT_TRUE(std::regex_search(r.client.out, c, row)) << r.client.out;
    EXPECT_EQ(s[0], c[0]);  // the same figures: the client's, exchanged as IEEE doubles
}

TEST(RigPerftest, FewerThanFiveIterationsAreRefusedInPerftestsWords) {
    const auto r = rig::test::run(PERFTEST_BINARY, {"ib_send_bw", "-n", "4"});
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.out, testing::StartsWith("rig_perftest: -n 4: Iteration num should be between 5 and 100000000\n"));
}

TEST(RigPerftest, UnknownTestIsRefused) {
    const auto r = rig::test::run(PERFTEST_BINARY, {"ib_write_bw"});
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.out,
                testing::StartsWith("rig_perftest: the first argument names the test: ib_send_bw or ib_read_bw\n"));
}

}  // namespace
