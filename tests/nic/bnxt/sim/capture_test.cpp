// Captures of a cable (cable.hpp), read back through libpcap: every frame both ways, in
// the order the cable carried them, with non-decreasing nanosecond timestamps of the real-
// time clock, the frame's exact bytes; a capture replaced or stopped holds what crossed
// while it ran; a path libpcap cannot open is an error naming it.
#include <time.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using rig::test::frames_from;
using rig::test::read_pcap;

std::int64_t realtime_ns() {
    timespec t{};
    clock_gettime(CLOCK_REALTIME, &t);
    return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

Bytes first_bytes(const rig::test::CapturedFrame& f, std::size_t n) {
    return {f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n)};
}

using CaptureTest = Pair;

TEST_F(CaptureTest, WireCaptureHoldsEveryFrameBothWaysWithExactBytes) {
    rig::test::TempDir dir;
    open();  // 1024-byte path MTU
    ASSERT_TRUE(wire->capture(dir.path() / "wire.pcap"));
    const Bytes data = pattern(3000, 7);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, 4096}});
    const std::int64_t before = realtime_ns();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 3000}});
    settle(a, b);
    const std::int64_t after = realtime_ns();
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    wire->stop_capture();

    const auto c = read_pcap(dir.path() / "wire.pcap");
    EXPECT_EQ(c.link_type, 1);  // DLT_EN10MB
    ASSERT_EQ(c.frames.size(), a.counters().frames_sent + b.counters().frames_sent);
    EXPECT_EQ(frames_from(c, a.mac), 3u);  // SEND_FIRST, SEND_MIDDLE, SEND_LAST
    EXPECT_EQ(frames_from(c, b.mac), b.counters().frames_sent);
    EXPECT_GE(b.counters().frames_sent, 1u);  // the acknowledgement
    for (std::size_t i = 0; i < c.frames.size(); ++i) {
        EXPECT_EQ(c.frames[i].length, c.frames[i].bytes.size()) << i;  // whole frames
        EXPECT_GE(c.frames[i].ns, before) << i;
        EXPECT_LE(c.frames[i].ns, after) << i;
        if (i > 0) {
            EXPECT_GE(c.frames[i].ns, c.frames[i - 1].ns) << i;
        }
    }
    EXPECT_GT(c.frames.back().ns, c.frames.front().ns);
    // The first frame: destination MAC (B), source MAC (A), EtherType (IPv4, 0x0800: the
    // QPs are RoCEv2/IPv4), and the first 1024 bytes of the message as its payload, before
    // the 4 bytes of the ICRC (no pad: 1024 is a multiple of 4).
    const auto& first = c.frames.front();
    Bytes head(14);
    for (std::size_t i = 0; i < 6; ++i) {
        head[i] = std::byte{b.mac[i]};
        head[6 + i] = std::byte{a.mac[i]};
    }
    head[12] = std::byte{0x08};
    head[13] = std::byte{0x00};
    EXPECT_EQ(first_bytes(first, 14), head);
    ASSERT_EQ(first.bytes.size(), 14u + 20 + 8 + 12 + 1024 + 4);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 1024, first.bytes.end() - 4 - 1024));
}

TEST_F(CaptureTest, ReplacedCaptureHoldsTheFramesOfItsTimeAndIsClosed) {
    rig::test::TempDir dir;
    open();
    ASSERT_TRUE(wire->capture(dir.path() / "one.pcap"));
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    const auto first_frames = a.counters().frames_sent + b.counters().frames_sent;
    ASSERT_TRUE(wire->capture(dir.path() / "two.pcap"));  // closes one.pcap
    EXPECT_EQ(read_pcap(dir.path() / "one.pcap").frames.size(), first_frames);
    b.post_recv(bqp, 2, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    const auto second_frames = a.counters().frames_sent + b.counters().frames_sent - first_frames;
    wire->stop_capture();
    wire->stop_capture();  // idempotent
    b.post_recv(bqp, 3, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    EXPECT_GT(second_frames, 0u);
    EXPECT_EQ(read_pcap(dir.path() / "two.pcap").frames.size(), second_frames);
    EXPECT_EQ(read_pcap(dir.path() / "one.pcap").frames.size(), first_frames);
}

TEST_F(CaptureTest, CaptureFileIsCompleteWhenTheWireIsDestroyed) {
    rig::test::TempDir dir;
    open();
    ASSERT_TRUE(wire->capture(dir.path() / "wire.pcap"));
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    const auto frames = a.counters().frames_sent + b.counters().frames_sent;
    wire.reset();
    EXPECT_EQ(read_pcap(dir.path() / "wire.pcap").frames.size(), frames);
}

TEST(Capture, PathLibpcapCannotOpenIsAnErrorNamingIt) {
    Model a, b;
    Wire w(a, b);
    auto r = w.capture("/nonexistent-rig-dir/wire.pcap");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().rfind("capture /nonexistent-rig-dir/wire.pcap: ", 0), 0u) << r.error();
    EXPECT_NE(r.error().find("No such file or directory"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace rig::bnxt::sim::test
