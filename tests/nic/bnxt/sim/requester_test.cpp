// The requester of an RC QP against acknowledgements no correct responder sends
// (nic/bnxt/sim/src/requester.cpp, packet.cpp), from a peer whose frames the test writes
// (rc_peer.hpp). IBA vol. 1 §9.7.5.2 Table 44 (AETH syndromes) and Linux rxe_comp.c
// check_ack are the reference.
#include "rc_peer.hpp"

namespace rig::bnxt::sim::test {
namespace {

class RequesterTest : public RcPeerTest {
protected:
    // B sends one signaled 64-byte SEND to the peer; its PSN.
    std::uint32_t send() {
        const std::uint32_t psn = qp.psn;
        b.post_send(qp, spec::wqe_send, spec::signal_comp, {{region, key, 64}});
        b.settle();
        return psn;
    }
    void acknowledge(std::uint32_t psn, std::uint8_t syndrome) {
        take(request(ACKNOWLEDGE, psn).with_aeth(syndrome, 1).no_ack_request());
    }
};

// NAK codes 4 to 31 are reserved for RC (Table 44; 4 is RD's Invalid RD Request): rxe's
// check_ack fails the WQE with IB_WC_REM_OP_ERR ("unexpected nak"), so the model fails it
// with REMOTE_OPERATION_ERR and the QP enters ERR; it never ignores one.
class UndefinedNakCode : public RequesterTest, public ::testing::WithParamInterface<std::uint8_t> {};

TEST_P(UndefinedNakCode, FailsTheWqeWithRemoteOperationError) {
    acknowledge(send(), static_cast<std::uint8_t>(0x60 | GetParam()));
    const auto c = b.poll(cq);
    ASSERT_TRUE(c) << "NAK code " << int(GetParam()) << " ignored";
    EXPECT_EQ(c->status(), 0x8);  // REMOTE_OPERATION_ERR (§5.5.1)
    EXPECT_EQ(qp_state(b, qp), ERR);
}

INSTANTIATE_TEST_SUITE_P(Reserved, UndefinedNakCode, ::testing::Values(4, 5, 0x10, 0x1F));

// The AETH kinds 010 and 1xx are reserved (Table 44): decode counts the packet bad
// (RxCounters::bad_aeth) and nothing reaches the QP: no retransmission, no completion;
// the ACK after it completes the SEND.
TEST_F(RequesterTest, ReservedAethKindIsABadPacketAndChangesNothing) {
    const std::uint32_t psn = send();
    const RxCounters before = b.nic.rx_counters();
    for (int syndrome : {0x40, 0x5F, 0x80, 0xA0, 0xC0, 0xE0}) acknowledge(psn, static_cast<std::uint8_t>(syndrome));
    const RxCounters after = b.nic.rx_counters();
    EXPECT_EQ(after.bad_aeth, before.bad_aeth + 6);
    EXPECT_EQ(after.delivered, before.delivered);
    EXPECT_EQ(b.counters().retransmissions, 0u);
    EXPECT_FALSE(b.poll(cq));
    acknowledge(psn, 0x1F);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
