// Bad input at the model's port, seeded and random (run under ASan+UBSan by the asan
// preset): valid frames captured between two models (SENDs of 1 to 3000 bytes, RDMA WRITEs,
// READ requests, ACKs), truncated, bit-flipped, overwritten, with lengths changed, some
// with their IPv4 checksum and ICRC mended so that the checks behind them are reached, and
// frames of random bytes, fed to one port. Whatever it makes of them, the port must not
// crash (ASan, UBSan), must count each frame exactly once (RxCounters), and must write
// nothing of its memory outside the receives posted to it: its whole data buffer but the
// posted receive stays as it was. Its QP is connected again whenever a frame made it fail.
//
// RIG_FUZZ_SEED and RIG_FUZZ_FRAMES (environment) choose another seed and count; a failure
// names the seed and the frame.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "pair.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {
namespace {

constexpr std::uint64_t receive_bytes = 4096;
constexpr std::byte untouched{0xEE};

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

std::uint64_t total(const RxCounters& c) {
    return c.delivered + c.arp_requests + c.neighbor_solicitations + c.neighbor_answers + c.not_roce + c.truncated +
           c.bad_length + c.bad_ip_checksum + c.bad_udp_port + c.bad_opcode + c.bad_aeth + c.bad_icrc + c.wrong_mac +
           c.wrong_address + c.unknown_qp + c.unconnected_qp + c.wrong_source + c.wrong_pkey;
}

void mend(Bytes& f, bool ip_checksum) {
    if (ip_checksum && f.size() >= 34 && f[12] == std::byte{0x08} && f[13] == std::byte{0x00}) {
        f[24] = f[25] = std::byte{0};
        std::uint32_t sum = 0;
        for (std::size_t i = 14; i < 34; i += 2)
            sum += std::to_integer<unsigned>(f[i]) << 8 | std::to_integer<unsigned>(f[i + 1]);
        while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
        f[24] = static_cast<std::byte>(~sum >> 8);
        f[25] = static_cast<std::byte>(~sum & 0xFF);
    }
    if (const auto c = testing::icrc(f))
        for (unsigned i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<std::byte>(*c >> (8 * i));
}

class FuzzTest : public Pair {
protected:
    // Frames A and B exchange: the corpus.
    std::vector<Bytes> corpus() {
        rig::test::TempDir dir;
        open();
        EXPECT_TRUE(wire->capture(dir.path() / "corpus.pcap"));
        a.bus.poke(abuf, pattern(8192, 5));
        std::uint32_t id = 1;
        for (std::uint32_t n : {1u, 3u, 64u, 1024u, 3000u}) {
            b.post_recv(bqp, id, {{bbuf, bkey, 4096}});
            a.post_send(aqp, id % 2 ? spec::wqe_send : spec::wqe_send_imm, spec::signal_comp, {{abuf, akey, n}},
                        0x1234);
            settle(a, b);
            while (b.poll(bcq)) {}
            while (a.poll(acq)) {}
            ++id;
        }
        a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 2500}}, 0, bbuf, bkey);
        settle(a, b);
        // A WRITE into memory B never opened to writes: B refuses it (and fails its QP).
        a.post_send(aqp, spec::wqe_write, spec::signal_comp, {{abuf, akey, 2048}}, 0, bbuf + 8192, bkey);
        settle(a, b);
        wire->stop_capture();
        std::vector<Bytes> out;
        for (auto& f : rig::test::read_pcap(dir.path() / "corpus.pcap").frames) out.push_back(std::move(f.bytes));
        return out;
    }

    // B's QP back to RTS, expecting A's corpus PSNs from `psn`, with receives posted (all
    // into the same bytes: the one region that may be written).
    void reconnect(std::uint32_t psn) {
        ASSERT_EQ(b.modify(bqp, 0x1, 0), 0);  // RESET (§4.6.9)
        bqp.sq_index = bqp.sq_epoch = bqp.rq_index = bqp.rq_epoch = 0;
        while (b.poll(bcq)) {}
        ASSERT_EQ(b.to_init(bqp), 0);
        ASSERT_EQ(b.to_rtr(bqp, a.gid, a.mac, aqp.qpn, psn), 0);
        ASSERT_EQ(b.to_rts(bqp), 0);
        for (std::uint32_t id = 0; id < 32; ++id)
            b.post_recv(bqp, id, {{bbuf, bkey, static_cast<std::uint32_t>(receive_bytes)}});
    }
};

TEST_F(FuzzTest, RandomAndMutatedFramesNeverReachMemoryOutsideThePostedReceives) {
    const std::uint64_t seed = env_or("RIG_FUZZ_SEED", 20240611);
    const std::uint64_t count = env_or("RIG_FUZZ_FRAMES", 20000);
    const auto frames = corpus();
    ASSERT_GE(frames.size(), 12u);
    const std::uint32_t first_psn = (static_cast<std::uint32_t>(std::to_integer<unsigned>(frames[0][51])) << 16) |
                                    (std::to_integer<unsigned>(frames[0][52]) << 8) |
                                    std::to_integer<unsigned>(frames[0][53]);
    wire.reset();  // B's answers go nowhere
    const std::uint64_t buffer_bytes = PairConfig{}.buffer_bytes;
    b.bus.poke(bbuf, Bytes(buffer_bytes, untouched));
    reconnect(first_psn);
    std::mt19937_64 random(seed);
    auto below = [&](std::uint64_t n) { return n == 0 ? 0 : random() % n; };
    std::uint64_t fed = 0;
    const std::uint64_t before = total(b.nic.rx_counters());
    for (std::uint64_t i = 0; i < count; ++i) {
        Bytes f;
        const unsigned kind = static_cast<unsigned>(below(10));
        if (kind == 0) {
            f.resize(below(4300));  // random bytes, sometimes behind a valid Ethernet and IP start
            for (auto& b8 : f) b8 = static_cast<std::byte>(random());
            if (f.size() >= 34 && below(2)) std::copy_n(frames[below(frames.size())].begin(), 34, f.begin());
        } else {
            f = frames[below(frames.size())];
            switch (below(6)) {
            case 0: f.resize(below(f.size() + 1)); break;  // truncated
            case 1:
                for (unsigned k = 0, n = 1 + static_cast<unsigned>(below(8)); k < n; ++k)
                    f[below(f.size())] ^= static_cast<std::byte>(1u << below(8));
                break;
            case 2: f[below(std::min<std::size_t>(f.size(), 70))] = static_cast<std::byte>(random()); break;
            case 3:
                f.insert(f.begin() + static_cast<std::ptrdiff_t>(below(f.size())), below(16) + 1, std::byte{0});
                break;
            case 4: {  // a length field: IPv4 total length or UDP length
                const std::size_t at = below(2) ? 16 : 38;
                f[at + 1] = static_cast<std::byte>(std::to_integer<unsigned>(f[at + 1]) + below(9) - 4);
                break;
            }
            default:  // a header field, with the checks before it mended
                f[14 + below(std::min<std::size_t>(f.size() - 14, 60))] = static_cast<std::byte>(random());
                break;
            }
            if (below(2)) mend(f, below(4) != 0);
        }
        b.faults.receive(f);
        ++fed;
        b.nic.settle();
        ASSERT_EQ(total(b.nic.rx_counters()) - before, fed)
            << "seed " << seed << ", frame " << i << ": counted other than once";
        if (i % 16 == 15 && (i % 512 == 511 || qp_state(b, bqp) != 4)) {  // failed, or now and then: fresh
            while (b.poll(bcq)) {}
            reconnect(first_psn);
        }
    }
    // Nothing outside the posted receive was written.
    const Bytes after = b.bus.peek(bbuf + receive_bytes, buffer_bytes - receive_bytes);
    const auto written = std::find_if(after.begin(), after.end(), [](std::byte x) { return x != untouched; });
    EXPECT_TRUE(written == after.end()) << "seed " << seed << ": B's buffer written at +"
                                        << receive_bytes + static_cast<std::uint64_t>(written - after.begin());
    const RxCounters c = b.nic.rx_counters();
    std::printf(
        "fuzz seed %llu, %llu frames: delivered %llu, not RoCE %llu, truncated %llu, bad length %llu, "
        "IPv4 checksum %llu, UDP port %llu, opcode %llu, ICRC %llu, MAC %llu, address %llu, unknown QP %llu, "
        "unconnected QP %llu, source %llu, P_Key %llu\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(count),
        static_cast<unsigned long long>(c.delivered), static_cast<unsigned long long>(c.not_roce),
        static_cast<unsigned long long>(c.truncated), static_cast<unsigned long long>(c.bad_length),
        static_cast<unsigned long long>(c.bad_ip_checksum), static_cast<unsigned long long>(c.bad_udp_port),
        static_cast<unsigned long long>(c.bad_opcode), static_cast<unsigned long long>(c.bad_icrc),
        static_cast<unsigned long long>(c.wrong_mac), static_cast<unsigned long long>(c.wrong_address),
        static_cast<unsigned long long>(c.unknown_qp), static_cast<unsigned long long>(c.unconnected_qp),
        static_cast<unsigned long long>(c.wrong_source), static_cast<unsigned long long>(c.wrong_pkey));
    // The mutations reach every check (the numbers are the seed's; each is > 0).
    EXPECT_GT(c.delivered, 0u);
    EXPECT_GT(c.truncated, 0u);
    EXPECT_GT(c.bad_length, 0u);
    EXPECT_GT(c.bad_ip_checksum, 0u);
    EXPECT_GT(c.bad_icrc, 0u);
    EXPECT_GT(c.not_roce, 0u);
    EXPECT_GT(c.bad_opcode, 0u);
    EXPECT_GT(c.unknown_qp, 0u);
    EXPECT_GT(c.wrong_address, 0u);
    EXPECT_GT(c.wrong_source, 0u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
