// rig's bootstrap protocol over real sockets (peer.hpp): a whole exchange of p2p_copy's
// job between two threads, and a peer that is not speaking the protocol, one case each,
// the error text checked whole. The bad peer is the test writing bytes it assembled by
// hand: header "RIGB", version and length big-endian, then the payload.
#include "rig/bootstrap/peer.hpp"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "connected.hpp"

// The largest allocation while `watching`: the oversized-length case checks that the
// announced length is never allocated. (GCC sees malloc and free meet in the replaced
// operators and warns of a mismatch that is none.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<bool> watching{false};
std::atomic<std::size_t> largest{0};
}  // namespace

void* operator new(std::size_t bytes) {
    if (watching.load(std::memory_order_relaxed)) {
        std::size_t seen = largest.load(std::memory_order_relaxed);
        while (bytes > seen && !largest.compare_exchange_weak(seen, bytes)) {}
    }
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
    try {
        return operator new(bytes);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace rig::bootstrap {
namespace {

using namespace std::chrono_literals;
using test::connected;
using test::put;

// A frame as the protocol lays it out, assembled byte by byte.
std::string frame(std::string_view payload, std::uint32_t version = 1, std::string_view magic = "RIGB",
                  std::optional<std::uint32_t> length = std::nullopt) {
    std::string out(magic);
    const std::uint32_t n = length.value_or(static_cast<std::uint32_t>(payload.size()));
    for (std::uint32_t v : {version, n})
        for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
    return out + std::string(payload);
}

// The raw side writes `bytes`; the Peer on the other side receives a "hello".
struct BadPeer : testing::Test {
    test::Connected c = connected();
    const std::string at_ = c.server.peer();
    Peer peer{std::move(c.server), 200ms};
    std::string receive_hello_error(std::string_view bytes) {
        put(c.client, bytes);
        auto m = peer.receive<Hello>();
        EXPECT_FALSE(m);
        return m ? std::string("(a hello)") : m.error();
    }
    // The peer's address, as the Peer names it.
    const std::string& at() const { return at_; }
    // The same connection with another timeout.
    Peer with(Timeout timeout) { return Peer{std::move(peer).stream(), timeout}; }
};

TEST_F(BadPeer, WrongMagicIsNotTheProtocol) {
    EXPECT_EQ(
        receive_hello_error("GET / HTTP/1.1\r\n\r\n"),
        at() +
            ": does not speak rig's bootstrap protocol: a message starts with 0x47455420, not 0x52494742 (\"RIGB\")");
}

TEST_F(BadPeer, OtherVersionIsRefused) {
    EXPECT_EQ(receive_hello_error(frame("{}", 2)),
              at() + ": speaks rig's bootstrap protocol version 2; this side speaks version 1");
}

TEST_F(BadPeer, OversizedLengthIsRefusedFromTheHeaderAlone) {
    // Only the header: a receiver that tried to read (or allocate) the payload would wait
    // out its timeout and answer with another error.
    Peer patient = with(2s);
    put(c.client, frame("", 1, "RIGB", 0xffff'ffff));
    largest = 0;
    watching = true;
    auto m = patient.receive<Hello>();
    watching = false;
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error(), patient.address() + ": announced a message of 4294967295 bytes; the limit is 1048576");
    EXPECT_LT(largest.load(), std::size_t{4096});
}

TEST_F(BadPeer, LengthOneAboveTheLimitIsRefused) {
    EXPECT_EQ(receive_hello_error(frame("", 1, "RIGB", max_message_bytes + 1)),
              at() + ": announced a message of 1048577 bytes; the limit is 1048576");
}

TEST_F(BadPeer, ClosingMidHeaderIsTruncation) {
    put(c.client, std::string_view("RIGB\0\0", 6));
    c.client.close();
    auto m = peer.receive<Hello>();
    EXPECT_EQ(m.error(), at() + ": closed the connection after 6 of the 12 bytes of the header of \"hello\"");
}

TEST_F(BadPeer, ClosingMidPayloadIsTruncation) {
    put(c.client, frame(R"({"type":"h)", 1, "RIGB", 40));
    c.client.close();
    EXPECT_EQ(peer.receive<Hello>().error(), at() + ": closed the connection after 10 of the 40 bytes of \"hello\"");
}

TEST_F(BadPeer, ClosingBetweenMessagesIsAnError) {
    c.client.close();
    EXPECT_EQ(peer.receive<QueuePair>().error(), at() + ": closed the connection before the header of \"queue_pair\"");
}

TEST_F(BadPeer, StallingBeforeTheHeaderTimesOut) {
    Peer quick = with(50ms);
    EXPECT_EQ(quick.receive<Hello>().error(), at() + ": the header of \"hello\" did not arrive within 50 ms");
}

TEST_F(BadPeer, StallingMidHeaderTimesOut) {
    Peer quick = with(50ms);
    put(c.client, std::string_view("RIGB\0", 5));
    EXPECT_EQ(quick.receive<Hello>().error(),
              at() + ": only 5 of the 12 bytes of the header of \"hello\" arrived within 50 ms");
}

TEST_F(BadPeer, StallingMidPayloadTimesOut) {
    Peer quick = with(50ms);
    put(c.client, frame(R"({"type":"h)", 1, "RIGB", 40));
    EXPECT_EQ(quick.receive<Hello>().error(), at() + ": only 10 of the 40 bytes of \"hello\" arrived within 50 ms");
}

TEST_F(BadPeer, PayloadThatIsNotJsonIsRefused) {
    EXPECT_EQ(receive_hello_error(frame(R"({"type": hello})")),
              at() + ": sent something that is not JSON (parse error at byte 10), where \"hello\" was expected");
}

TEST_F(BadPeer, EmptyPayloadIsNotJson) {
    EXPECT_EQ(receive_hello_error(frame("")),
              at() + ": sent something that is not JSON (parse error at byte 1), where \"hello\" was expected");
}

TEST_F(BadPeer, JsonThatIsNotAnObjectIsRefused) {
    EXPECT_EQ(receive_hello_error(frame("[1,2]")),
              at() + ": sent JSON that is not an object: [1,2], where \"hello\" was expected");
}

TEST_F(BadPeer, ObjectWithoutATypeIsRefused) {
    EXPECT_EQ(receive_hello_error(frame(R"({"role":"sender"})")),
              at() + ": sent a JSON object without a string \"type\", where \"hello\" was expected");
}

TEST_F(BadPeer, UnknownTypeIsRefused) {
    EXPECT_EQ(receive_hello_error(frame(R"({"type":"bye"})")),
              at() + ": sent a message of unknown type \"bye\", where \"hello\" was expected");
}

TEST_F(BadPeer, AnotherMessageThanTheExpectedOneIsRefused) {
    EXPECT_EQ(receive_hello_error(frame(R"({"type":"ready","path":"p2p"})")),
              at() + ": sent \"ready\", where \"hello\" was expected");
}

TEST_F(BadPeer, FailureFromThePeerIsItsMessage) {
    EXPECT_EQ(receive_hello_error(frame(R"({"type":"error","message":"machine 2: no GPU at 0000:41:00.0"})")),
              at() + ": gave up: machine 2: no GPU at 0000:41:00.0");
}

TEST_F(BadPeer, LongValuesAreQuotedCut) {
    const std::string role(1000, 'x');
    EXPECT_EQ(receive_hello_error(frame(R"({"type":"hello","role":")" + role + "\"}")),
              at() + ": in the \"hello\" message, \"role\" is \"" + std::string(60, 'x') +
                  "..., not \"sender\" or \"receiver\"");
}

TEST_F(BadPeer, ConnectionIsClosedAndNoDescriptorLeftAfterAnError) {
    auto count_fds = [] {
        int n = 0;
        if (DIR* d = ::opendir("/proc/self/fd")) {
            while (::readdir(d)) ++n;
            ::closedir(d);
        }
        return n;
    };
    const int before = count_fds();
    {
        auto other = connected();
        Peer victim{std::move(other.server), 200ms};
        const std::string at = victim.address();
        put(other.client, frame("not json"));
        EXPECT_FALSE(victim.receive<Hello>());
        EXPECT_TRUE(victim.closed());  // by the Peer itself: the caller did not close it
        std::array<std::byte, 1> out;
        auto n = other.client.read_some(out, 1s, "the close");
        ASSERT_TRUE(n) << n.error();
        EXPECT_EQ(*n, 0u);  // the peer saw the connection end
        const std::string first =
            "sent something that is not JSON (parse error at byte 2), where \"hello\" was expected";
        EXPECT_EQ(victim.error(), at + ": " + first);
        EXPECT_EQ(victim.send(Failure{"bad hello"}).error(),
                  at + ": not sending the \"error\" message: the connection was closed after an error: " + first);
        EXPECT_EQ(victim.receive<QueuePair>().error(),
                  at + ": no \"queue_pair\": the connection was closed after an error: " + first);
        EXPECT_EQ(victim.poll(0ms).error(),
                  at + ": no next message: the connection was closed after an error: " + first);
    }
    EXPECT_EQ(count_fds(), before);
}

TEST_F(BadPeer, StallIsAnErrorThatClosesTheConnection) {
    Peer quick = with(50ms);
    EXPECT_EQ(quick.receive<Hello>().error(), at() + ": the header of \"hello\" did not arrive within 50 ms");
    EXPECT_TRUE(quick.closed());
    std::array<std::byte, 1> out;
    auto n = c.client.read_some(out, 1s, "the close");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 0u);
}

TEST_F(BadPeer, FailureFromThePeerClosesTheConnectionToo) {
    put(c.client, frame(R"({"type":"error","message":"size 1 here, 2 there"})"));
    EXPECT_EQ(peer.receive<QueuePair>().error(), at() + ": gave up: size 1 here, 2 there");
    EXPECT_TRUE(peer.closed());
}

TEST_F(BadPeer, ClosedByTheCallerRefusesLaterCalls) {
    peer.close();
    EXPECT_EQ(peer.send(Ready{Path::P2p}).error(),
              at() + ": not sending the \"ready\" message: the connection is closed");
    EXPECT_EQ(peer.error(), "");
}

// A field that is missing, mistyped or out of range, in a message that is otherwise good.
struct FieldCase {
    const char* name;
    const char* payload;
    const char* expected_type;
    const char* error;  // after "<peer>: "
};

const FieldCase field_cases[] = {
    {"HelloWithoutJob", R"({"type":"hello","role":"sender"})", "hello", R"(the "hello" message has no field "job")"},
    {"JobWithoutDepth", R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"mode":"send","choice":"both"}})",
     "hello", R"(the "hello" message has no field "job.depth")"},
    {"JobNotAnObject", R"({"type":"hello","role":"sender","job":3})", "hello",
     R"(in the "hello" message, "job" is 3, not an object)"},
    {"DepthZero",
     R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"depth":0,"mode":"send","choice":"both"}})", "hello",
     R"(in the "hello" message, "job.depth" is 0, below 1)"},
    {"UnknownRole", R"({"type":"hello","role":"boss"})", "hello",
     R"(in the "hello" message, "role" is "boss", not "sender" or "receiver")"},
    {"UnknownChoice",
     R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"depth":1,"mode":"send","choice":"all"}})", "hello",
     R"(in the "hello" message, "job.choice" is "all", not one of "both", "auto", "p2p", "bounce")"},
    {"QpnAsString", R"({"type":"queue_pair","qpn":"17"})", "queue_pair",
     R"(in the "queue_pair" message, "qpn" is "17", not an unsigned integer)"},
    {"QpnNegative", R"({"type":"queue_pair","qpn":-1})", "queue_pair",
     R"(in the "queue_pair" message, "qpn" is -1, not an unsigned integer)"},
    {"QpnFractional", R"({"type":"queue_pair","qpn":1.5})", "queue_pair",
     R"(in the "queue_pair" message, "qpn" is 1.5, not an unsigned integer)"},
    {"QpnAbove24Bits", R"({"type":"queue_pair","qpn":16777216})", "queue_pair",
     R"(in the "queue_pair" message, "qpn" is 16777216, above 16777215)"},
    {"GidNotIpv6", R"({"type":"queue_pair","qpn":17,"psn":1,"gid":"10.77.0.2"})", "queue_pair",
     R"(in the "queue_pair" message, "gid" is "10.77.0.2", not an IPv6 address)"},
    {"MacShort", R"({"type":"queue_pair","qpn":17,"psn":1,"gid":"::ffff:10.77.0.2","mac":"52:54:00:00:00"})",
     "queue_pair",
     R"(in the "queue_pair" message, "mac" is "52:54:00:00:00", not a MAC address like "02:00:00:00:00:01")"},
    {"MacNotHex", R"({"type":"queue_pair","qpn":17,"psn":1,"gid":"::ffff:10.77.0.2","mac":"52:54:00:00:00:0g"})",
     "queue_pair",
     R"(in the "queue_pair" message, "mac" is "52:54:00:00:00:0g", not a MAC address like "02:00:00:00:00:01")"},
    {"MtuNotAnIbMtu",
     R"({"type":"queue_pair","qpn":17,"psn":1,"gid":"::ffff:10.77.0.2","mac":"52:54:00:00:00:02","mtu":1500})",
     "queue_pair", R"(in the "queue_pair" message, "mtu" is 1500, not 256, 512, 1024, 2048 or 4096)"},
    {"OpenedNotABoolean", R"({"type":"path","path":"p2p","opened":"yes"})", "path",
     R"(in the "path" message, "opened" is "yes", not true or false)"},
    {"RegionNotAnObject",
     R"({"type":"path","path":"p2p","opened":true,"reason":"","regions":[{"address":0,"rkey":1,"bytes":1},7]})", "path",
     R"(in the "path" message, "regions[1]" is 7, not an object)"},
    {"RkeyAbove32Bits",
     R"({"type":"path","path":"p2p","opened":true,"reason":"","regions":[{"address":0,"rkey":4294967296,"bytes":1}]})",
     "path", R"(in the "path" message, "regions[0].rkey" is 4294967296, above 4294967295)"},
    {"RegionWithoutBytes",
     R"({"type":"path","path":"p2p","opened":true,"reason":"","regions":[{"address":0,"rkey":1}]})", "path",
     R"(the "path" message has no field "regions[0].bytes")"},
    {"ChecksumAbove64Bits", R"({"type":"outcome","path":"p2p","bytes":1,"checksum":18446744073709551616})", "outcome",
     R"(in the "outcome" message, "checksum" is 1.8446744073709552e+19, not an unsigned integer)"},
    {"CablePortZero",
     R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"depth":1,"mode":"send","choice":"both"},"cable_port":0})",
     "hello", R"(in the "hello" message, "cable_port" is 0, below 1)"},
    {"CablePortAbove16Bits",
     R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"depth":1,"mode":"send","choice":"both"},"cable_port":65536})",
     "hello", R"(in the "hello" message, "cable_port" is 65536, above 65535)"},
    {"CablePortAsString",
     R"({"type":"hello","role":"sender","job":{"size":1,"chunk":1,"depth":1,"mode":"send","choice":"both"},"cable_port":"4791"})",
     "hello", R"(in the "hello" message, "cable_port" is "4791", not an unsigned integer)"},
    {"ErrorWithoutMessage", R"({"type":"error"})", "hello", R"(the "error" message has no field "message")"},
};

void PrintTo(const FieldCase& f, std::ostream* out) { *out << f.name; }

struct BadField : BadPeer, testing::WithParamInterface<FieldCase> {};

TEST_P(BadField, IsAnErrorNamingTheField) {
    const FieldCase& f = GetParam();
    put(c.client, frame(f.payload));
    const auto m = std::string_view(f.expected_type) == "hello"        ? peer.receive<Hello>().error()
                   : std::string_view(f.expected_type) == "queue_pair" ? peer.receive<QueuePair>().error()
                   : std::string_view(f.expected_type) == "path"       ? peer.receive<PathOpen>().error()
                                                                       : peer.receive<Outcome>().error();
    EXPECT_EQ(m, at() + ": " + f.error);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadField, testing::ValuesIn(field_cases),
                         [](const testing::TestParamInfo<FieldCase>& p) { return std::string(p.param.name); });

TEST(Peer, SendWritesTheHeaderThenTheJson) {
    auto c = connected();
    Peer peer{std::move(c.client), 1s};
    ASSERT_TRUE(peer.send(Ready{Path::P2p}));
    const std::string expected =
        std::string("RIGB\x00\x00\x00\x01\x00\x00\x00\x1d", 12) + R"({"path":"p2p","type":"ready"})";
    std::string got(expected.size(), '\0');
    ASSERT_TRUE(c.server.read(std::as_writable_bytes(std::span(got)), 1s, "the frame"));
    EXPECT_EQ(got, expected);
}

TEST(Peer, UnknownFieldsAreIgnored) {
    auto c = connected();
    Peer peer{std::move(c.server), 1s};
    put(c.client, frame(R"({"type":"staged","path":"bounce","chunks":3,"note":"from a later minor version"})"));
    auto m = peer.receive<Staged>();
    ASSERT_TRUE(m) << m.error();
    EXPECT_EQ(*m, (Staged{Path::Bounce, 3}));
}

TEST(Peer, PollReturnsNothingUntilAMessageArrives) {
    auto c = connected();
    Peer a{std::move(c.client), 1s}, b{std::move(c.server), 1s};
    auto none = b.poll(0ms);
    ASSERT_TRUE(none) << none.error();
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE(a.send(Consumed{Path::Bounce, 4}));
    auto some = b.poll(1s);
    ASSERT_TRUE(some) << some.error();
    ASSERT_TRUE(some->has_value());
    EXPECT_EQ(std::get<Consumed>(**some), (Consumed{Path::Bounce, 4}));
}

TEST(Peer, EveryMessageArrivesAsSent) {
    auto c = connected();
    Peer a{std::move(c.client), 1s}, b{std::move(c.server), 1s};
    bnxt::Endpoint endpoint{
        0x2464c3, 0xabcdef, bnxt::ipv4_gid(10, 77, 0, 2), {0x52, 0x54, 0, 0, 0, 2}, bnxt::Mtu::Mtu4096};
    const std::vector<Message> messages = {
        Hello{Role::Receiver, {1 << 30, 1 << 20, 16, Mode::Read, Choice::Auto}, std::nullopt},
        Hello{Role::Sender, {4096, 4096, 1, Mode::SendRecv, Choice::Both}, 40312},
        QueuePair{endpoint, 128, 16},
        PathOpen{Path::Bounce,
                 true,
                 "GPU copy engine to host memory",
                 {{{0xffff'8000'0000'0000, 0x1234'5678}, 1 << 20}, {{4096, 7}, 1}}},
        PathOpen{Path::P2p, false, "machine 1: distance 4, does not forward: ACS redirects at 0000:40:01.0", {}},
        Ready{Path::Bounce},
        Staged{Path::Bounce, 0},
        Consumed{Path::Bounce, 1'000'000},
        Outcome{Path::P2p, 1 << 30, 0xfedc'ba98'7654'3210, ""},
        Outcome{Path::P2p, 4096, 0, "machine 2: the read of chunk 1 completed with a remote access error"},
        Failure{"machine 1: sizes differ"},
    };
    for (const Message& m : messages) {
        ASSERT_TRUE(a.send(m));
        auto got = b.receive();
        ASSERT_TRUE(got) << got.error();
        EXPECT_EQ(*got, m) << type_name(m);
    }
}

// p2p_copy's job between two processes as messages.hpp orders it: --pull (Mode::Read),
// both paths, the bounce path's slots counted with staged and consumed.
TEST(Peer, WholeExchangeOfAReadJobRunsInOrder) {
    auto listener = Listener::listen({"127.0.0.1", 0});
    ASSERT_TRUE(listener) << listener.error();
    const Job job{8 << 20, 1 << 20, 4, Mode::Read, Choice::Both};
    const QueuePair receiver_qp{
        {0x11, 0x00a1b2, bnxt::ipv4_gid(10, 77, 0, 2), {0x52, 0x54, 0, 0, 0, 2}, bnxt::Mtu::Mtu1024}, 128, 128};
    const QueuePair sender_qp{
        {0x2, 0x123456, bnxt::ipv4_gid(10, 77, 0, 1), {0x02, 0, 0, 0, 0, 1}, bnxt::Mtu::Mtu4096}, 16, 16};
    const RemoteRegion gpu{{0x1'0000'0000, 0x100}, 8 << 20}, slots{{0x7f00'0000'0000, 0x200}, 4 << 20};
    std::vector<std::string> seen;  // by the receiver, in order

    std::thread receiver([&] {
        auto stream = listener->accept(5s);
        ASSERT_TRUE(stream) << stream.error();
        Peer sender{std::move(*stream), 5s};
        auto hello = sender.receive<Hello>();
        ASSERT_TRUE(hello) << hello.error();
        seen.push_back("hello " + std::string(to_string(hello->role)));
        EXPECT_EQ(differences(job, hello->job), "");
        ASSERT_TRUE(sender.send(Hello{Role::Receiver, job, std::nullopt}));
        auto qp = sender.receive<QueuePair>();
        ASSERT_TRUE(qp) << qp.error();
        EXPECT_EQ(*qp, sender_qp);
        ASSERT_TRUE(sender.send(receiver_qp));
        for (Path path : {Path::P2p, Path::Bounce}) {
            auto open = sender.receive<PathOpen>();
            ASSERT_TRUE(open) << open.error();
            ASSERT_EQ(open->regions.size(), 1u);
            seen.push_back("path " + std::string(to_string(open->path)) + " rkey " +
                           std::to_string(open->regions[0].remote.rkey));
            ASSERT_TRUE(sender.send(PathOpen{path, true, "receiver ready", {}}));
            for (std::uint64_t read = 0; path == Path::Bounce && read < 8;) {
                auto staged = sender.receive<Staged>();
                ASSERT_TRUE(staged) << staged.error();
                seen.push_back("staged " + std::to_string(staged->chunks));
                read = staged->chunks;  // reads them all
                ASSERT_TRUE(sender.send(Consumed{path, read}));
            }
            ASSERT_TRUE(sender.send(Outcome{path, job.size, 0x5eed, ""}));
            auto outcome = sender.receive<Outcome>();
            ASSERT_TRUE(outcome) << outcome.error();
            EXPECT_EQ(outcome->checksum, 0x5eedu);
        }
        auto end = sender.receive();
        EXPECT_EQ(end.error(), sender.address() + ": closed the connection before the header of the next message");
    });

    {
        auto stream = Stream::connect({"127.0.0.1", listener->port()}, 5s);
        ASSERT_TRUE(stream) << stream.error();
        Peer receiver_peer{std::move(*stream), 5s};
        ASSERT_TRUE(receiver_peer.send(Hello{Role::Sender, job, std::nullopt}));
        auto hello = receiver_peer.receive<Hello>();
        ASSERT_TRUE(hello) << hello.error();
        EXPECT_EQ(hello->role, Role::Receiver);
        ASSERT_TRUE(receiver_peer.send(sender_qp));
        auto qp = receiver_peer.receive<QueuePair>();
        ASSERT_TRUE(qp) << qp.error();
        EXPECT_EQ(*qp, receiver_qp);
        for (Path path : {Path::P2p, Path::Bounce}) {
            ASSERT_TRUE(receiver_peer.send(PathOpen{path, true, "sender ready", {path == Path::P2p ? gpu : slots}}));
            auto open = receiver_peer.receive<PathOpen>();
            ASSERT_TRUE(open) << open.error();
            EXPECT_TRUE(open->opened);
            for (std::uint64_t staged = 4; path == Path::Bounce && staged <= 8; staged += 4) {
                ASSERT_TRUE(receiver_peer.send(Staged{path, staged}));
                auto consumed = receiver_peer.receive<Consumed>();
                ASSERT_TRUE(consumed) << consumed.error();
                EXPECT_EQ(consumed->chunks, staged);
            }
            auto outcome = receiver_peer.receive<Outcome>();
            ASSERT_TRUE(outcome) << outcome.error();
            EXPECT_EQ(*outcome, (Outcome{path, job.size, 0x5eed, ""}));
            ASSERT_TRUE(receiver_peer.send(Outcome{path, job.size, 0x5eed, ""}));
        }
    }  // the sender closes
    receiver.join();
    EXPECT_THAT(seen, testing::ElementsAre("hello sender", "path p2p rkey 256", "path bounce rkey 512", "staged 4",
                                           "staged 8"));
}

}  // namespace
}  // namespace rig::bootstrap
