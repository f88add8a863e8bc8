// The transport tests' two models over a faulty cable (transport.hpp).
#include "transport.hpp"

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace rig::bnxt::sim::test {

using namespace std::chrono_literals;

void TransportTest::start(const Case& c, bool threaded, std::uint8_t timeout) {
    timeout_ = timeout;
    threaded_ = threaded;
    if (threaded) {
        wire.reset();
        auto ca = DatagramCable::bind(a.nic, "127.0.0.1:0");
        auto cb = DatagramCable::bind(b.nic, "127.0.0.1:0");
        ASSERT_TRUE(ca && cb);
        datagrams_[0] = std::move(*ca);
        datagrams_[1] = std::move(*cb);
        ASSERT_TRUE(datagrams_[0]->connect(datagrams_[1]->local()));
        ASSERT_TRUE(datagrams_[1]->connect(datagrams_[0]->local()));
    }
    open({.sq_size = 64,
          .rq_size = 64,
          .cq_size = 256,
          .mtu_code = c.mtu_code,
          .timeout = timeout,
          .buffer_bytes = std::max<std::uint64_t>(c.bytes * c.count, 1 << 20),
          .connect = false});
    ASSERT_EQ(a.to_init(aqp), 0);
    ASSERT_EQ(a.to_rtr(aqp, b, bqp, c.mtu_code), 0);
    ASSERT_EQ(b.to_init(bqp), 0);
    // B answers as many READs again as A may have outstanding: responder depth 16,
    // max_dest_rd_atomic @77 34 (IRRQ slots, §4.6.9).
    ASSERT_EQ(b.to_rtr(bqp, a, aqp, c.mtu_code, 34), 0);
    // A takes up to 16 READs outstanding: RTR -> RTS as Node::to_rts, max_rd_atomic @76 17
    // (ORRQ slots, §4.6.9).
    ASSERT_EQ(
        a.modify(aqp, 0x000AE001, 3,
                 [&](Msg& m) { m.put(64, 1, timeout).put(65, 1, 7).put(66, 1, 7).put(72, 4, aqp.psn).put(76, 1, 17); }),
        0);
    ASSERT_EQ(b.to_rts(bqp, 7, timeout, 7), 0);
    if (threaded) {
        // Each port's own cable: its frames out are End::first there.
        datagrams_[0]->inject(End::first, c.faults);
        Cable::Faults other = c.faults;
        ++other.seed;
        datagrams_[1]->inject(End::first, other);
        a.nic.start();
        b.nic.start();
    } else {
        wire->inject(c.faults);
    }
}

Cable::FaultCounters TransportTest::faults_of(unsigned sender) {
    if (threaded_) return datagrams_[sender]->fault_counters(End::first);
    return wire->fault_counters(sender == 0 ? End::first : End::second);
}

void TransportTest::run_until(const std::function<bool()>& done, Outcome& out) {
    const auto step = local_ack_timeout(timeout_) + 1ns;
    if (!threaded_) {
        for (;;) {
            std::size_t steps = 0;
            for (std::size_t s = 1; s > 0; steps += s) s = a.nic.settle() + b.nic.settle();
            if (done()) return;
            if (steps > 0) continue;  // done() posted more
            ASSERT_LT(++out.rounds, 200'000u) << "no end to the retries";
            a.clock.advance(step);
            b.clock.advance(step);
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    auto quiet = std::chrono::steady_clock::now();
    while (!done()) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no end to the retries";
        if (std::chrono::steady_clock::now() - quiet > 20ms) {
            a.clock.advance(step);
            b.clock.advance(step);
            ++out.rounds;
            quiet = std::chrono::steady_clock::now();
        }
        std::this_thread::yield();
    }
}

Outcome TransportTest::transfer(const Case& c) {
    Outcome out;
    const std::uint64_t n = c.bytes;
    const auto len = static_cast<std::uint32_t>(n);
    std::vector<Bytes> data(c.count);
    for (unsigned i = 0; i < c.count; ++i) {
        data[i] = pattern(n, 0x5000 + i);
        if (c.op == Op::send) a.bus.poke(abuf + i * n, data[i]);
        else b.bus.poke(bbuf + i * n, data[i]);
    }
    unsigned posted = 0, requester_done = 0, responder_done = 0;
    // The work requests of a burst with one SQ doorbell, as a driver posts a list: its
    // packets leave in one step, among which the cable may reorder them.
    auto post = [&] {
        const unsigned before = posted;
        while (posted < c.count && posted - requester_done < c.outstanding) {
            if (c.op == Op::send) {
                b.post_recv(bqp, posted, {{bbuf + posted * n, bkey, len}});
                a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf + posted * n, akey, len}}, 0, 0, 0, false);
            } else {
                a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf + posted * n, akey, len}}, 0,
                            bbuf + posted * n, bkey, false);
            }
            ++posted;
        }
        if (posted != before) a.ring_sq(aqp);
    };
    bool bad = false;
    auto done = [&] {
        while (auto q = a.poll(acq)) {
            if (q->status() != 0 || q->sq_cons_idx() != (requester_done + 1) % 64) {
                ADD_FAILURE() << c.name << ": requester CQE " << requester_done << " status " << int(q->status())
                              << " sq_cons_idx " << q->sq_cons_idx();
                bad = true;
            }
            if (c.op == Op::read && !(a.bus.peek(abuf + requester_done * n, n) == data[requester_done])) {
                ADD_FAILURE() << c.name << ": read " << requester_done << " brought other bytes";
                bad = true;
            }
            ++requester_done;
        }
        while (c.op == Op::send && (responder_done < requester_done || responder_done < posted)) {
            const auto r = b.poll(bcq);
            if (!r) break;
            if (r->status() != 0 || r->wr_id() != responder_done || r->length() != n) {
                ADD_FAILURE() << c.name << ": receive " << responder_done << " status " << int(r->status()) << " wr_id "
                              << r->wr_id() << " length " << r->length();
                bad = true;
            }
            if (!(b.bus.peek(bbuf + responder_done * n, n) == data[responder_done])) {
                ADD_FAILURE() << c.name << ": receive " << responder_done << " holds other bytes";
                bad = true;
            }
            ++responder_done;
        }
        if (bad) return true;
        post();
        return requester_done == c.count && (c.op == Op::read || responder_done == c.count);
    };
    post();
    run_until(done, out);
    // Nothing more: no completion twice, none late. On threads, both models stop first and
    // what is left is stepped here, so nothing still crossing is missed; then, by hand as
    // on threads, every timer gets the chance to fire.
    if (threaded_) {
        a.nic.stop();
        b.nic.stop();
    }
    for (int i = 0; i < 3; ++i) {
        settle(a, b);
        a.clock.advance(local_ack_timeout(timeout_) + 1ns);
        b.clock.advance(local_ack_timeout(timeout_) + 1ns);
        settle(a, b);
    }
    EXPECT_FALSE(a.poll(acq)) << c.name << ": a requester CQE more";
    EXPECT_FALSE(b.poll(bcq)) << c.name << ": a responder CQE more";
    out.first = faults_of(0);
    out.second = faults_of(1);
    return out;
}

void TransportTest::check_counters(const Case& c, const Outcome& out) {
    const auto ka = a.counters(), kb = b.counters();
    SCOPED_TRACE(c.name);
    if (std::getenv("RIG_TRANSPORT_FIGURES"))
        std::printf(
            "%s: rounds %lu; A sent %lu (lost %lu dup %lu reord %lu), B sent %lu (lost %lu dup %lu reord %lu); "
            "retrans %lu timeouts %lu go_backs %lu seqnak rx %lu implied %lu; B: seqnak tx %lu ooo %lu dup %lu acks %lu\n",
            c.name.c_str(), out.rounds, out.first.carried, out.first.dropped, out.first.duplicated, out.first.reordered,
            out.second.carried, out.second.dropped, out.second.duplicated, out.second.reordered, ka.retransmissions,
            ka.local_ack_timeouts, ka.go_backs, ka.sequence_naks_received, ka.implied_naks, kb.sequence_naks_sent,
            kb.out_of_sequence, kb.duplicate_requests, kb.acks_sent);
    EXPECT_EQ(out.first.carried, ka.frames_sent);
    EXPECT_EQ(out.second.carried, kb.frames_sent);
    if (!threaded_) {  // the kernel may lose datagrams too (receive_overflows)
        EXPECT_EQ(kb.frames_received, out.first.carried - out.first.dropped + out.first.duplicated);
        EXPECT_EQ(ka.frames_received, out.second.carried - out.second.dropped + out.second.duplicated);
    }
    // Each request A's cable lost was sent again (a READ request asked again counts one).
    EXPECT_GE(ka.retransmissions, out.first.dropped);
    const std::uint64_t lost = out.first.dropped + out.second.dropped;
    if (lost == 0 && out.first.reordered + out.second.reordered + out.first.duplicated + out.second.duplicated == 0) {
        EXPECT_EQ(ka.retransmissions, 0u);
        EXPECT_EQ(kb.duplicate_requests, 0u);
    }
    if (lost > 0) EXPECT_GT(ka.retransmissions, 0u);
    // What went back was started by a NAK, an implied NAK or the timer; the responder
    // sent the NAKs, one per gap, and never more than it met requests out of order.
    EXPECT_LE(ka.go_backs, ka.sequence_naks_received + ka.implied_naks);
    EXPECT_LE(kb.sequence_naks_sent, kb.out_of_sequence);
    if (!threaded_) EXPECT_LE(ka.sequence_naks_received, kb.sequence_naks_sent + out.second.duplicated);
    EXPECT_EQ(ka.retries_exceeded, 0u);
    EXPECT_EQ(kb.frames_dropped, 0u);  // nothing malformed or misaddressed came
}

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

std::vector<Case> fault_cases(Size size) {
    const std::vector<std::pair<std::string, Cable::Faults>> faults = {
        {"OnePercentLoss", {.drop = 0.01, .seed = 101}},
        {"TenPercentLoss", {.drop = 0.10, .seed = 102}},
        {"OnePercentDuplication", {.duplicate = 0.01, .seed = 103}},
        {"ReorderingWithinEight", {.reorder = 0.05, .reorder_window = 8, .seed = 104}},
    };
    std::vector<Case> out;
    for (const auto& [fault_name, f] : faults) {
        for (Op op : {Op::send, Op::read}) {
            const std::string what = op == Op::send ? "Send" : "Read";
            if (size == Size::small) {
                out.push_back({what + "1ByteX500" + fault_name, op, 1, 500, 2, f});
                out.push_back({what + "4KiBX500" + fault_name, op, 4 * KiB, 500, 2, f});  // 4 packets of 1 KiB each
                continue;
            }
            const bool slow = op == Op::read && (f.drop >= 0.1 || f.reorder > 0);
            if (slow == (size == Size::slow))
                out.push_back({what + "16MiB" + fault_name, op, 16 * MiB, 1, 4, f});  // 4096 packets of 4 KiB
        }
    }
    return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

}  // namespace rig::bnxt::sim::test
