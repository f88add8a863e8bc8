// rig_rc_pingpong's command line (options.hpp): ibv_rc_pingpong's options as rdma-core
// v44.0's rc_pingpong.c main reads them (strtoul base 0, -m through pp_mtu_to_enum, port
// above 65535 refused, one server host), and rig's --cable and --ip.
#include "options.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rc_pingpong {
namespace {

rig::Result<Options> parse_args(std::vector<const char*> args) {
    args.insert(args.begin(), "rig_rc_pingpong");
    return parse(static_cast<int>(args.size()), args.data());
}

TEST(Options, DefaultsAreRcPingpongsAndAServer) {
    auto o = parse_args({});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->port, 18515);
    EXPECT_EQ(o->size, 4096u);
    EXPECT_EQ(o->mtu, rig::bnxt::Mtu::Mtu1024);
    EXPECT_EQ(o->rx_depth, 500u);
    EXPECT_EQ(o->iters, 1000u);
    EXPECT_EQ(o->gid_index, -1);
    EXPECT_FALSE(o->server);
    EXPECT_FALSE(o->cable);
    EXPECT_EQ(o->ip, (std::array<std::uint8_t, 4>{10, 77, 0, 1}));
}

TEST(Options, ClientTakesEveryOption) {
    auto o = parse_args({"-p", "18600", "-s", "0x1000", "-n", "1000", "-m", "1024", "-g", "1", "-r", "64", "--cable",
                         "5555:127.0.0.1:5556", "--ip", "10.77.0.3", "10.77.0.2"});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->port, 18600);
    EXPECT_EQ(o->size, 4096u);  // strtoul base 0
    EXPECT_EQ(o->gid_index, 1);
    EXPECT_EQ(o->rx_depth, 64u);
    EXPECT_EQ(o->server, "10.77.0.2");
    EXPECT_EQ(o->cable, (Cable{5555, {"127.0.0.1", 5556}}));
    EXPECT_EQ(o->ip, (std::array<std::uint8_t, 4>{10, 77, 0, 3}));
}

TEST(Options, LongNamesAreRcPingpongs) {
    auto o = parse_args({"--port=7000", "--size=64", "--mtu=4096", "--rx-depth=8", "--iters=3", "--gid-idx=0"});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->port, 7000);
    EXPECT_EQ(o->size, 64u);
    EXPECT_EQ(o->mtu, rig::bnxt::Mtu::Mtu4096);
    EXPECT_EQ(o->rx_depth, 8u);
    EXPECT_EQ(o->iters, 3u);
    EXPECT_EQ(o->gid_index, 0);
}

TEST(Options, MtuOutsideTheIbMtusIsRefused) {
    EXPECT_EQ(parse_args({"-m", "1500"}).error(), "-m 1500: not 256, 512, 1024, 2048 or 4096");
}

TEST(Options, PortAbove65535IsRefused) {
    EXPECT_EQ(parse_args({"-p", "65536"}).error(), "-p 65536: not a number from 0 to 65535");
}

TEST(Options, NumberWithJunkIsRefused) {
    EXPECT_EQ(parse_args({"-s", "4k"}).error(), "-s 4k: not a number from 0 to 4294967295");
}

TEST(Options, TwoHostsAreRefused) { EXPECT_EQ(parse_args({"a", "b"}).error(), "one server host at most, not 2"); }

TEST(Options, CableWithoutItsThreePartsIsRefused) {
    EXPECT_EQ(parse_args({"--cable", "5555:127.0.0.1"}).error(),
              "--cable 5555:127.0.0.1: not LOCAL_PORT:REMOTE_HOST:REMOTE_PORT");
    EXPECT_EQ(parse_args({"--cable", "x:127.0.0.1:5556"}).error(),
              "--cable x:127.0.0.1:5556: not LOCAL_PORT:REMOTE_HOST:REMOTE_PORT");
}

TEST(Options, CableToAnIpv6HostTakesBrackets) {
    auto o = parse_args({"--cable", "5555:[::1]:5556"});
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->cable, (Cable{5555, {"::1", 5556}}));
}

TEST(Options, IpThatIsNoIpv4AddressIsRefused) {
    EXPECT_EQ(parse_args({"--ip", "10.77.0"}).error(), "--ip 10.77.0: not an IPv4 address");
}

TEST(Options, UnknownOptionIsRefused) { EXPECT_FALSE(parse_args({"-x", "1"})); }

}  // namespace
}  // namespace rc_pingpong
