// Completion queues end to end (rig/bnxt/cq.hpp; docs/hsi.md §5.5-§5.8): rings that
// wrap many times with the model checking every doorbell's index and epoch (B21), waits
// on the notification queue's interrupt and by polling, every error completion the NIC
// reports and the flush after it, and receives into another device's memory where the
// topology forwards and where it does not.
#include "rig/bnxt/cq.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "nic_machine.hpp"

namespace rig::bnxt::test {
namespace {

void expect_clean_doorbells(const SimMachine& m) {
    const auto c = m.faults.counters();
    EXPECT_EQ(c.epoch_faults, 0u);
    EXPECT_EQ(c.doorbell_drops, 0u);
    EXPECT_EQ(c.bar_width_faults, 0u);
    EXPECT_EQ(c.bar_unmapped, 0u);
    EXPECT_EQ(c.bad_descriptors, 0u);
    EXPECT_EQ(c.psn_search_mismatches, 0u);
    EXPECT_EQ(c.pte_invalid, 0u);
}

// B21: rings of 64, 65, 128, 129 and 1000 entries (depth + 1), each wrapped at least three
// times; the model drops any doorbell whose index and epoch disagree with its wrap count.
class Wrap : public ::testing::TestWithParam<std::uint32_t> {};
INSTANTIATE_TEST_SUITE_P(B21, Wrap, ::testing::Values(64u, 65u, 128u, 129u, 1000u));

TEST_P(Wrap, CqAndSqWrapManyTimesWithEveryCompletionInOrder) {
    const std::uint32_t ring = GetParam();
    PairOptions o;
    o.depths = {ring - 1, ring - 1};
    Pair p(o);
    const std::size_t n = 3 * ring + 7;
    constexpr std::size_t size = 8;
    Region ra = host(*p.sa.nic, n * size), rb = host(*p.sb.nic, n * size);
    const auto data = pattern(n * size, ring);
    ra.write(0, data);
    std::size_t posted_recv = 0, posted_send = 0;
    std::vector<Completion> sends, recvs;
    std::array<Completion, 7> batch;  // odd batches: a CQ doorbell lands at every index
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((sends.size() < n || recvs.size() < n) && std::chrono::steady_clock::now() < deadline) {
        while (posted_recv < n &&
               p.sb.qp->post(Recv{.region = &rb, .offset = posted_recv * size, .bytes = size, .id = posted_recv}))
            ++posted_recv;
        while (posted_send < posted_recv &&
               p.sa.qp->post(Send{.region = &ra, .offset = posted_send * size, .bytes = size, .id = posted_send}))
            ++posted_send;
        for (std::size_t k = p.sa.send_cq->poll(batch), i = 0; i < k; ++i) sends.push_back(batch[i]);
        for (std::size_t k = p.sb.recv_cq->poll(batch), i = 0; i < k; ++i) recvs.push_back(batch[i]);
    }
    ASSERT_EQ(sends.size(), n);
    ASSERT_EQ(recvs.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(sends[i].id, i);
        ASSERT_EQ(sends[i].status, Status::Ok) << i;
        ASSERT_EQ(recvs[i].id, i);
        ASSERT_EQ(recvs[i].status, Status::Ok) << i;
    }
    EXPECT_EQ(read_back(rb, 0, n * size), data);
    expect_clean_doorbells(p.a);
    expect_clean_doorbells(p.b);
}

// A wait on machine b's receive CQ on a thread of its own, with both models stepped by
// hand: constructing it returns once the wait's two arming doorbells (the CQ's, then
// NQ_ARM) reached the model, so a completion after that wakes it only through the NQ's
// MSI-X interrupt (§5.6).
class ArmedWait {
public:
    ArmedWait(Pair& p, Notify notify) : p_(p) {
        const auto doorbells = p.b.faults.counters().doorbells;
        thread_ = std::jthread([this, notify] {
            got = p_.sb.recv_cq->wait(out, std::chrono::seconds(20), notify);
            done_ = true;
        });
        while (p.b.faults.counters().doorbells < doorbells + 2 && in_time()) {
            p.b.model->settle();
            std::this_thread::yield();
        }
    }
    // Steps both models until the wait returned (or 20 s passed), then joins it.
    void finish() {
        while (!done_ && in_time()) {
            p_.a.model->settle();
            p_.b.model->settle();
            std::this_thread::yield();
        }
        thread_.join();
    }

    std::array<Completion, 4> out;
    Result<std::size_t> got = 0;

private:
    bool in_time() const { return std::chrono::steady_clock::now() < deadline_; }
    Pair& p_;
    std::atomic<bool> done_{false};
    const std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::jthread thread_;  // last: joined before the rest goes
};

TEST(Cq, WaitSleepsOnTheInterruptUntilTheCompletion) {
    PairOptions o;
    o.thread = Thread::Stepped;
    Pair p(o);
    ASSERT_TRUE(p.sb.nic->interrupts());
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 4096, .id = 42}));
    p.b.model->settle();
    const auto before = p.b.faults.counters();
    ArmedWait wait(p, Notify::Any);
    ra.write(0, pattern(100, 9));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 100, .id = 1}));
    wait.finish();
    ASSERT_TRUE(wait.got) << wait.got.error();
    ASSERT_EQ(*wait.got, 1u);
    EXPECT_EQ(wait.out[0].id, 42u);
    EXPECT_EQ(read_back(rb, 0, 100), pattern(100, 9));
    EXPECT_GT(p.b.faults.counters().interrupts, before.interrupts);
}

// §5.8.1 CQ_ARMSE: a wait armed for solicited completions sleeps through a receive whose
// send did not ask (no interrupt; its completion waits in the ring), and wakes on the next
// one that did; it then takes both, in order. The models are stepped by hand, so the
// interrupt count is exact after each settle.
TEST(Cq, SolicitedWaitWakesOnlyForASolicitedReceive) {
    PairOptions o;
    o.thread = Thread::Stepped;
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 100, .id = 41}));
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = 100, .bytes = 100, .id = 42}));
    p.b.model->settle();
    const auto before = p.b.faults.counters();
    ArmedWait wait(p, Notify::Solicited);
    const auto sent = pattern(200, 3);
    ra.write(0, sent);
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 100, .id = 1}));
    for (int i = 0; i < 4; ++i) {
        p.a.model->settle();
        p.b.model->settle();
    }
    EXPECT_EQ(p.b.faults.counters().interrupts, before.interrupts);
    EXPECT_EQ(read_back(rb, 0, 100), std::vector<std::byte>(sent.begin(), sent.begin() + 100));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .offset = 100, .bytes = 100, .id = 2, .solicited = Solicit::Yes}));
    wait.finish();
    ASSERT_TRUE(wait.got) << wait.got.error();
    EXPECT_EQ(p.b.faults.counters().interrupts, before.interrupts + 1);
    ASSERT_EQ(*wait.got, 2u);
    EXPECT_EQ(wait.out[0].id, 41u);
    EXPECT_EQ(wait.out[1].id, 42u);
    EXPECT_EQ(read_back(rb, 0, 200), sent);
}

TEST(Cq, TwoWaitersOnOneNqEachGetTheirCompletion) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 1}));
    std::array<Completion, 1> sent, received;
    Result<std::size_t> a = 0, b = 0;
    std::thread t1([&] { a = p.sa.send_cq->wait(sent, std::chrono::seconds(20)); });
    std::thread t2([&] { b = p.sb.recv_cq->wait(received, std::chrono::seconds(20)); });
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 2}));
    t1.join();
    t2.join();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*a, 1u);
    EXPECT_EQ(*b, 1u);
    EXPECT_EQ(sent[0].id, 2u);
    EXPECT_EQ(received[0].id, 1u);
}

TEST(Cq, WaitByPollingWithoutInterrupts) {
    PairOptions o;
    o.nic.interrupts = Interrupts::Poll;
    Pair p(o);
    EXPECT_FALSE(p.sa.nic->interrupts());
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 2}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 1u);
    EXPECT_EQ(p.b.faults.counters().interrupts, 0u);
}

// B25: a wait with nothing to wait for ends at its timeout, measured on the NIC's clock.
TEST(Cq, WaitWithNothingToTakeEndsAtItsTimeout) {
    SimMachine m("sim0", Iommu::Off, 1, Thread::Stepped);
    auto nic = m.open(stepped_options(m));
    ASSERT_TRUE(nic) << nic.error();
    auto cq = Cq::create(*nic, 16);
    ASSERT_TRUE(cq) << cq.error();
    std::array<Completion, 1> out;
    auto got = cq->wait(out, std::chrono::seconds(10));
    ASSERT_TRUE(got) << got.error();
    EXPECT_EQ(*got, 0u);
}

TEST(Cq, PollOfAnEmptyCqTakesNothing) {
    Pair p;
    std::array<Completion, 8> out;
    EXPECT_EQ(p.sa.send_cq->poll(out), 0u);
    EXPECT_EQ(p.sa.send_cq->poll({}), 0u);
}

TEST(Cq, DepthBeyondTheLimitThrows) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_THROW((void)Cq::create(*nic, 0), std::invalid_argument);
    EXPECT_THROW((void)Cq::create(*nic, nic->limits().max_cqe + 1), std::invalid_argument);
}

TEST(Cq, CreateRefusedByTheFirmwareIsAnError) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    m.faults.refuse(hsi::Opcode::CREATE_CQ, hsi::RcfwStatus::RESOURCES);
    const auto commands = m.faults.counters().rcfw_commands;
    auto cq = Cq::create(*nic, 16);
    ASSERT_FALSE(cq);
    EXPECT_EQ(cq.error(), "0000:04:00.0: the firmware refused CREATE_CQ (status 2: RESOURCES)");
    // The refused CQ is no CQ: no DESTROY_CQ (of an id the firmware never gave) follows.
    EXPECT_EQ(m.faults.counters().rcfw_commands, commands + 1);
}

TEST(Cq, DestroyWhileAQpUsesItThrowsAndAfterItsQpWorks) {
    Pair p;
    EXPECT_THROW((void)p.sa.send_cq->destroy(), std::invalid_argument);
    ASSERT_TRUE(p.sa.qp->destroy());
    EXPECT_TRUE(p.sa.send_cq->destroy());
    EXPECT_TRUE(p.sa.send_cq->destroy());  // again: nothing
    ASSERT_TRUE(p.sa.nic->close());
    EXPECT_EQ(p.a.system.holdings(nic_bus), (rig::sim::Holdings{}));
}

// ---- error completions and the flush after them ----

// A read naming a key the peer never gave: REMOTE_ACCESS_ERR, the Qp in Error, and every
// request after it flushed, in posting order, reported even where unsignalled.
TEST(Cq, ReadWithABadRkeyFailsAndFlushesWhatFollows) {
    Pair p;
    Region ra = host(*p.sa.nic, 8192), rb = host(*p.sb.nic, 8192);
    ASSERT_TRUE(p.sa.qp->post(Recv{.region = &ra, .offset = 4096, .bytes = 64, .id = 100}));
    ASSERT_TRUE(
        p.sa.qp->post(Read{.region = &ra, .bytes = 64, .remote = Remote{rb.address(), rb.rkey() ^ 0x100}, .id = 1}));
    const auto failed = take(*p.sa.send_cq, 1);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].id, 1u);
    EXPECT_EQ(failed[0].op, Op::Read);
    EXPECT_EQ(failed[0].status, Status::RemoteAccess) << to_string(failed[0].status);
    EXPECT_EQ(failed[0].code, 0x7);
    EXPECT_EQ(p.sa.qp->state(), QpState::Error);
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 2, .signalled = Signal::No}));
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &ra, .bytes = 8, .remote = rb.remote(0), .id = 3}));
    const auto flushed = take(*p.sa.send_cq, 2);
    ASSERT_EQ(flushed.size(), 2u);
    EXPECT_EQ(flushed[0].id, 2u);
    EXPECT_EQ(flushed[0].status, Status::Flushed);
    EXPECT_EQ(flushed[1].id, 3u);
    EXPECT_EQ(flushed[1].status, Status::Flushed);
    EXPECT_EQ(to_string(flushed[1].status), "WORK_REQUEST_FLUSHED_ERR");
    const auto receive = take(*p.sa.recv_cq, 1);
    ASSERT_EQ(receive.size(), 1u);
    EXPECT_EQ(receive[0].id, 100u);
    EXPECT_EQ(receive[0].status, Status::Flushed);
    EXPECT_EQ(receive[0].code, 0u);  // flushed by the driver (P5 writes no FLUSHED CQE)
}

// ---- a hostile device: CQEs that no queue of the Cq can have produced ----

// Polls `cq` until it holds `n` completions or reports a device error (and nothing more
// is left), within a generous deadline.
std::vector<Completion> poll_until(Cq& cq, std::size_t n) {
    std::vector<Completion> out;
    std::array<Completion, 16> batch;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
        const std::size_t got = cq.poll(batch);
        out.insert(out.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(got));
        if (got == 0 && cq.error()) break;
        if (got == 0) std::this_thread::yield();
    }
    return out;
}

struct HostileCqe {
    std::string name;
    std::function<void(std::span<std::byte, 32>)> rewrite;
    std::string why;
};

std::vector<HostileCqe> hostile_cqes() {
    auto put16 = [](std::span<std::byte, 32> c, std::size_t at, std::uint16_t v) {
        c[at] = std::byte(v & 0xFF);
        c[at + 1] = std::byte(v >> 8);
    };
    return {
        // §5.5.1: sq_cons_idx 5 after one send posted: four work requests never posted.
        {"SqConsIdxBeyondThePosted", [=](auto c) { put16(c, 8, 5); },
         "sq_cons_idx beyond the send queue or the work requests posted"},
        {"SqConsIdxBeyondTheRing", [=](auto c) { put16(c, 8, 0xFFFF); },
         "sq_cons_idx beyond the send queue or the work requests posted"},
        {"RequesterCqeCompletingNothing", [=](auto c) { put16(c, 8, 0); },
         "a requester CQE that completes no work request"},
        {"UnknownStatus", [](auto c) { c[25] = std::byte{0x55}; }, "a requester status no table lists"},
        {"UdResponderType", [](auto c) { c[24] = std::byte{static_cast<std::uint8_t>(2 << 1)}; },
         "a CQE of a type no queue of this CQ produces"},
        {"TerminalBeyondThePosted",
         [=](auto c) {
             c[24] = std::byte{0xE << 1};
             c[25] = std::byte{0};
             put16(c, 8, 9);
         },
         "a terminal CQE's consumer indexes beyond the queues or the work requests posted"},
    };
}

class Hostile : public ::testing::TestWithParam<HostileCqe> {};
INSTANTIATE_TEST_SUITE_P(Cq, Hostile, ::testing::ValuesIn(hostile_cqes()), [](const auto& p) { return p.param.name; });

// The CQE of one signalled send, rewritten: no completion is made up from it (before,
// poll reported work requests never posted, id 0 and OK, and the queue refused every
// post after); the Cq is in error naming the CQE, the Qp is in Error, the send is Flushed.
TEST_P(Hostile, RequesterCqeTheDriverDidNotPostForIsADeviceError) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 1}));
    p.a.faults.rewrite_cqes(GetParam().rewrite);
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 7}));
    const auto got = poll_until(*p.sa.send_cq, 2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 7u);
    EXPECT_EQ(got[0].status, Status::Flushed);
    EXPECT_EQ(p.sa.qp->state(), QpState::Error);
    const auto error = p.sa.send_cq->error();
    ASSERT_TRUE(error);
    EXPECT_EQ(error->rfind("0000:04:00.0: CQ " + std::to_string(p.sa.send_cq->id()) +
                               ": the NIC wrote an invalid CQE at index 0 (" + GetParam().why + "): ",
                           0),
              0u)
        << *error;
    std::array<Completion, 4> out;
    auto w = p.sa.send_cq->wait(out, std::chrono::milliseconds(1));
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error(), *error);
}

TEST(Cq, ResponderCqeNamingAnotherReceiveIsADeviceError) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 1}));
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = 64, .bytes = 64, .id = 2}));
    p.b.faults.rewrite_cqes([](std::span<std::byte, 32> c) { c[28] = std::byte{1}; });  // wr_id 1, the second
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 3}));
    const auto got = poll_until(*p.sb.recv_cq, 3);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].id, 1u);
    EXPECT_EQ(got[0].status, Status::Flushed);
    EXPECT_EQ(got[1].id, 2u);
    EXPECT_EQ(got[1].status, Status::Flushed);
    ASSERT_TRUE(p.sb.recv_cq->error());
    EXPECT_NE(p.sb.recv_cq->error()->find("(a responder CQE naming another receive than the oldest outstanding)"),
              std::string::npos);
}

TEST(Cq, ReceiveLongerThanItsBytesIsADeviceError) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 1}));
    p.b.faults.rewrite_cqes([](std::span<std::byte, 32> c) { c[1] = std::byte{0x10}; });  // length 4096 + 8
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 3}));
    const auto got = poll_until(*p.sb.recv_cq, 2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::Flushed);
    ASSERT_TRUE(p.sb.recv_cq->error());
    EXPECT_NE(p.sb.recv_cq->error()->find("(a receive longer than the bytes posted for it)"), std::string::npos);
}

TEST(Cq, ReadBeyondThePeersRegionFailsWithRemoteAccess) {
    Pair p;
    Region ra = host(*p.sa.nic, 8192), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &ra, .bytes = 200, .remote = rb.remote(4000), .id = 1}));
    const auto got = take(*p.sa.send_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::RemoteAccess) << to_string(got[0].status);
}

TEST(Cq, ReadOfADeregisteredPeerRegionFailsWithRemoteAccess) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    const Remote gone = rb.remote(0);
    ASSERT_TRUE(rb.deregister());
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &ra, .bytes = 64, .remote = gone, .id = 1}));
    const auto got = take(*p.sa.send_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::RemoteAccess) << to_string(got[0].status);
}

// A message longer than the receive posted for it: LOCAL_LENGTH_ERR at the receiver, an
// error at the sender, and the receiver's other receives flushed.
TEST(Cq, MessageLongerThanTheReceiveFailsBothSides) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 100, .id = 1}));
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = 100, .bytes = 100, .id = 2}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 200, .id = 3}));
    const auto received = take(*p.sb.recv_cq, 2);
    ASSERT_EQ(received.size(), 2u);
    EXPECT_EQ(received[0].id, 1u);
    EXPECT_EQ(received[0].status, Status::LocalLength) << to_string(received[0].status);
    EXPECT_EQ(received[1].id, 2u);
    EXPECT_EQ(received[1].status, Status::Flushed) << to_string(received[1].status);
    EXPECT_EQ(received[1].code, 0u);  // the driver's software flush: the NIC wrote no CQE for it
    EXPECT_EQ(p.sb.qp->state(), QpState::Error);
    const auto sent = take(*p.sa.send_cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].id, 3u);
    EXPECT_NE(sent[0].status, Status::Ok);
    EXPECT_NE(sent[0].status, Status::Flushed);
}

// No receive posted and a bounded RNR retry: RNR_NAK_RETRY_CNT_ERR.
TEST(Cq, SendWithoutAReceiveFailsOnceRnrRetriesRunOut) {
    PairOptions o;
    o.retries.rnr_retry = 1;
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096);
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 1}));
    const auto got = take(*p.sa.send_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::RnrRetryExceeded) << to_string(got[0].status);
    EXPECT_EQ(to_string(got[0].status), "RNR_NAK_RETRY_CNT_ERR");
}

// ---- another device's memory ----

// The receive lands in the GPU-like BAR below the NIC's own switch: forwarded.
TEST(Cq, ReceiveIntoADeviceRegionWhereTheTopologyForwards) {
    Pair p;
    ASSERT_TRUE(p.b.machine().forwards(near_gpu_bus, nic_bus));
    p.b.take_gpus();
    auto gpu = Region::device(*p.sb.nic, p.b.gpu_runs(near_gpu_bus, 64 << 10, 256 << 10));
    ASSERT_TRUE(gpu) << gpu.error();
    Region ra = host(*p.sa.nic, 200000);
    const auto data = pattern(200000, 21);
    ra.write(0, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &*gpu, .offset = 1000, .bytes = 200000, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 200000, .id = 2}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::Ok) << to_string(got[0].status);
    const auto memory = p.b.gpu_memory(p.b.near_gpu);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), memory.begin() + (64 << 10) + 1000));
    EXPECT_EQ(memory[(64 << 10) + 999], std::byte{0});
}

// A read into the GPU-like BAR: the NIC writes the peer's bytes there.
TEST(Cq, ReadIntoADeviceRegionWhereTheTopologyForwards) {
    Pair p;
    p.a.take_gpus();
    auto gpu = Region::device(*p.sa.nic, p.a.gpu_runs(near_gpu_bus, 0, 1 << 20));
    ASSERT_TRUE(gpu) << gpu.error();
    Region rb = host(*p.sb.nic, 65536);
    const auto data = pattern(65536, 8);
    rb.write(0, data);
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &*gpu, .offset = 4096, .bytes = 65536, .remote = rb.remote(0), .id = 1}));
    const auto got = take(*p.sa.send_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::Ok) << to_string(got[0].status);
    const auto memory = p.a.gpu_memory(p.a.near_gpu);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), memory.begin() + 4096));
    EXPECT_EQ(p.a.system.faults(), 0u);
}

// B12: the far GPU-like BAR sits below another root port of a host bridge that does not
// forward between them. The region is refused before anything is registered, naming the
// host bridge, where it used to register and fail the first receive.
TEST(Cq, DeviceRegionWhereTheTopologyDoesNotForwardIsRefusedUpFront) {
    Pair p;
    ASSERT_FALSE(p.b.machine().forwards(far_gpu_bus, nic_bus));
    p.b.take_gpus();
    auto gpu = Region::device(*p.sb.nic, p.b.gpu_runs(far_gpu_bus, 0, 65536));
    ASSERT_FALSE(gpu);
    EXPECT_NE(gpu.error().find("does not carry the NIC's requests to 0000:05:00.0 BAR0"), std::string::npos)
        << gpu.error();
    EXPECT_NE(gpu.error().find("pci0000:00's first device 0000:00:00.0 (8086:6f00) is not in the allow-list"),
              std::string::npos)
        << gpu.error();
    EXPECT_EQ(p.b.system.faults(), 0u);
}

// Behind an IOMMU with ACS redirect on the switch ports and a root complex that carries
// peer requests: the NIC's IOMMU domain maps the GPU-like BAR, and the receive lands there.
TEST(Cq, ReceiveIntoADeviceRegionThroughTheHostBridgeBehindAnIommu) {
    PairOptions o;
    o.iommu = Iommu::On;
    o.routing = Routing::redirect_to_allowed();
    Pair p(o);
    p.b.take_gpus();
    const auto runs = p.b.gpu_runs(near_gpu_bus, 0, 256 << 10);
    auto gpu = Region::device(*p.sb.nic, runs);
    ASSERT_TRUE(gpu) << gpu.error();
    EXPECT_NE(gpu->address(), runs[0].address.value);
    Region ra = host(*p.sa.nic, 100000);
    const auto data = pattern(100000, 5);
    ra.write(0, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &*gpu, .offset = 4096, .bytes = 100000, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 100000, .id = 2}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::Ok) << to_string(got[0].status);
    const auto memory = p.b.gpu_memory(p.b.near_gpu);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), memory.begin() + 4096));
    EXPECT_EQ(p.b.system.faults(), 0u);
}

}  // namespace
}  // namespace rig::bnxt::test
