// The JSON of each bootstrap message as it leaves a Peer, pinned to text written by hand
// from peer.hpp's list (keys in the order nlohmann-json writes an object: sorted), and the
// comparison of two jobs (messages.hpp).
#include "rig/bootstrap/messages.hpp"

#include <gtest/gtest.h>

#include "connected.hpp"
#include "rig/bootstrap/peer.hpp"

namespace rig::bootstrap {
namespace {

using namespace std::chrono_literals;

// The payload Peer::send writes for `message`, after checking its 12-byte header.
std::string payload_of(const Message& message) {
    auto c = test::connected();
    Peer peer{std::move(c.client), 1s};
    EXPECT_TRUE(peer.send(message));
    std::array<std::byte, 12> header;
    EXPECT_TRUE(c.server.read(header, 1s, "the header"));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(header.data()), 8), std::string("RIGB\0\0\0\1", 8));
    std::uint32_t length = 0;
    for (int i = 8; i < 12; ++i) length = length << 8 | std::to_integer<std::uint32_t>(header[i]);
    std::string payload(length, '\0');
    EXPECT_TRUE(c.server.read(std::as_writable_bytes(std::span(payload)), 1s, "the payload"));
    return payload;
}

TEST(Messages, HelloCarriesRoleAndJob) {
    EXPECT_EQ(
        payload_of(Hello{Role::Sender, {268435456, 1048576, 16, Mode::Read, Choice::Auto}, std::nullopt}),
        R"({"job":{"choice":"auto","chunk":1048576,"depth":16,"mode":"read","size":268435456},"role":"sender","type":"hello"})");
}

TEST(Messages, HelloCarriesTheCablePortWhereItHasOne) {
    EXPECT_EQ(
        payload_of(Hello{Role::Receiver, {4096, 4096, 1, Mode::SendRecv, Choice::P2p}, 18515}),
        R"({"cable_port":18515,"job":{"choice":"p2p","chunk":4096,"depth":1,"mode":"send","size":4096},"role":"receiver",)"
        R"("type":"hello"})");
}

TEST(Messages, QueuePairCarriesTheEndpointInTextAndTheReadDepths) {
    const bnxt::Endpoint endpoint{
        0x000011, 0x00a1b2, bnxt::ipv4_gid(10, 77, 0, 2), {0x52, 0x54, 0x00, 0x00, 0x00, 0x02}, bnxt::Mtu::Mtu1024};
    EXPECT_EQ(payload_of(QueuePair{endpoint, 128, 16}),
              R"({"gid":"::ffff:10.77.0.2","mac":"52:54:00:00:00:02","max_qp_init_rd_atom":16,"max_qp_rd_atom":128,)"
              R"("mtu":1024,"psn":41394,"qpn":17,"type":"queue_pair"})");
}

TEST(Messages, PathCarriesEachRegionsAddressRkeyAndBytes) {
    EXPECT_EQ(payload_of(PathOpen{Path::P2p, true, "forwards", {{{0xffff'ffff'ffff'f000, 0xdeadbeef}, 4096}}}),
              R"({"opened":true,"path":"p2p","reason":"forwards","regions":[{"address":18446744073709547520,)"
              R"("bytes":4096,"rkey":3735928559}],"type":"path"})");
}

TEST(Messages, CountsAndOutcomeAndErrorAreFlat) {
    EXPECT_EQ(payload_of(Ready{Path::Bounce}), R"({"path":"bounce","type":"ready"})");
    EXPECT_EQ(payload_of(Staged{Path::Bounce, 3}), R"({"chunks":3,"path":"bounce","type":"staged"})");
    EXPECT_EQ(payload_of(Consumed{Path::Bounce, 2}), R"({"chunks":2,"path":"bounce","type":"consumed"})");
    EXPECT_EQ(payload_of(Outcome{Path::P2p, 1024, 0xffff'ffff'ffff'ffff, ""}),
              R"({"bytes":1024,"checksum":18446744073709551615,"failed":"","path":"p2p","type":"outcome"})");
    EXPECT_EQ(payload_of(Failure{"machine 2: \"quoted\"\n"}),
              R"({"message":"machine 2: \"quoted\"\n","type":"error"})");
}

TEST(Messages, BytesThatAreNotUtf8AreReplacedNotThrown) {
    EXPECT_EQ(payload_of(Failure{"bad \xff byte"}), "{\"message\":\"bad \xef\xbf\xbd byte\",\"type\":\"error\"}");
}

TEST(Messages, TypeNamesAreTheWireNames) {
    EXPECT_STREQ(type_name<Hello>(), "hello");
    EXPECT_STREQ(type_name<QueuePair>(), "queue_pair");
    EXPECT_STREQ(type_name<PathOpen>(), "path");
    EXPECT_STREQ(type_name<Failure>(), "error");
}

TEST(Messages, EqualJobsHaveNoDifferences) {
    const Job job{1 << 20, 1 << 16, 8, Mode::SendRecv, Choice::Both};
    EXPECT_EQ(differences(job, job), "");
}

TEST(Messages, DifferingJobsNameEachField) {
    const Job here{1048576, 65536, 8, Mode::SendRecv, Choice::Both};
    const Job there{2097152, 65536, 8, Mode::Read, Choice::P2p};
    EXPECT_EQ(differences(here, there),
              "size 1048576 here, 2097152 there; mode send here, read there; choice both here, p2p there");
}

}  // namespace
}  // namespace rig::bootstrap
