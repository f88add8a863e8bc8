// The model's RoCE firmware channel (docs/hsi.md §4): CMDQ and CREQ flow, phase and
// wrap-around, side buffers, the INITIALIZE_FW gate, status codes, injected faults.
#include <gtest/gtest.h>

#include <functional>

#include "harness.hpp"

namespace rig::bnxt::sim::test {
namespace {

Msg query_version() { return Msg(16).put(0, 1, spec::op_query_version); }

Msg add_gid(std::uint8_t last) {
    Msg g(48);
    g.put(0, 1, spec::op_add_gid);
    g.put(16, 1, last).put(17, 1, 0).put(18, 1, 0).put(19, 1, 10).put(20, 1, 0xFF).put(21, 1, 0xFF);
    return g;
}

// Writes a command into the CMDQ without triggering (for tests that batch).
void submit(Node& n, Msg c) {
    const std::size_t slots = (c.b.size() + 15) / 16;
    c.b.resize(slots * 16);
    c.put(1, 1, slots).put(4, 2, n.cookie++);
    for (std::size_t i = 0; i < slots; ++i)
        n.bus.poke(n.cmdq + ((n.cmdq_prod + i) % n.cmdq_depth) * 16, std::span(c.b).subspan(i * 16, 16));
    n.cmdq_prod = (n.cmdq_prod + static_cast<std::uint32_t>(slots)) & 0xFFFF;
}

void trigger(Node& n) {
    n.w32(0x60C, n.cmdq_prod | (n.cmdq_first ? 0x80000000u : 0u));
    n.cmdq_first = false;
    n.w32(0x700, 1);
    n.settle();
}

TEST(BnxtModelRcfw, QueryVersionCompletesWithVersionsInline) {
    Node n;
    n.open_channel();
    const auto c = n.rcfw(query_version());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 0);
    EXPECT_EQ(get(c->raw, 8, 1) & 1, 1u);  // v: phase 1 on the first pass
    EXPECT_EQ(get(c->raw, 12, 1), 1u);     // intf_maj: RoCE SP HSI 1.8.x
    EXPECT_EQ(get(c->raw, 13, 1), 8u);
}

TEST(BnxtModelRcfw, CommandsOtherThanQueryAndInitializeWaitForInitializeFw) {
    Node n;
    n.open_channel();
    const auto c = n.rcfw(add_gid(1));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 3);  // INVALID_CMD (§4.3)
    const std::uint64_t sb = n.bus.alloc(4096);
    EXPECT_EQ(n.rcfw(Msg(16).put(0, 1, spec::op_query_func), sb, 10)->status, 0);
}

TEST(BnxtModelRcfw, QueryFuncFillsTheSideBufferBeforeTheCompletion) {
    Node n;
    n.open_channel();
    const std::uint64_t sb = n.bus.alloc(4096);
    const auto c = n.rcfw(Msg(16).put(0, 1, spec::op_query_func), sb, 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 0);
    EXPECT_EQ(c->xid, 10u);                                   // size, in 16-byte units
    EXPECT_EQ(n.bus.get(sb + 0, 1), 0x83u);                   // sb header: opcode
    EXPECT_EQ(n.bus.get(sb + 2, 2), get(c->raw, 2, 2));       // cookie
    EXPECT_EQ(n.bus.get(sb + 6, 1), 10u);                     // resp_size written
    EXPECT_EQ(n.bus.get(sb + 8, 8), std::uint64_t{1} << 39);  // max_mr_size
    EXPECT_EQ(n.bus.get(sb + 16, 4), 1024u);                  // max_qp
    EXPECT_EQ(n.bus.get(sb + 20, 2), 4096u);                  // max_qp_wr
    EXPECT_EQ(n.bus.get(sb + 36, 1), 6u);                     // max_sge
    EXPECT_EQ(n.bus.get(sb + 68, 4), 96u);                    // max_inline_data
    EXPECT_EQ(n.bus.get(sb + 76, 4), 256u);                   // max_gid
}

TEST(BnxtModelRcfw, SideBufferIsWrittenOnlyAsFarAsResponseSize) {
    Node n;
    n.open_channel();
    const std::uint64_t sb = n.bus.alloc(4096);
    n.bus.poke(sb, Bytes(160, std::byte{0xEE}));
    const auto c = n.rcfw(Msg(16).put(0, 1, spec::op_query_func), sb, 4);  // 64 bytes
    ASSERT_TRUE(c);
    EXPECT_EQ(n.bus.get(sb + 6, 1), 4u);
    EXPECT_EQ(n.bus.get(sb + 63, 1), 0x00u);  // max_ah's last byte: written
    EXPECT_EQ(n.bus.get(sb + 64, 1), 0xEEu);  // max_pkeys: beyond resp_size
}

TEST(BnxtModelRcfw, QueryFuncWithoutSideBufferIsInvalidParameter) {
    Node n;
    n.open_channel();
    EXPECT_EQ(n.rcfw(Msg(16).put(0, 1, spec::op_query_func))->status, 5);
}

TEST(BnxtModelRcfw, InitializeFwTwiceFailsAndNeedsAnAllocatedStatContext) {
    Node n;
    n.open_channel();
    EXPECT_EQ(n.rcfw(Msg(112).put(0, 1, spec::op_initialize_fw).put(108, 4, 0x77))->status, 5);
    const Bytes s = n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1));
    const auto id = get(s, 8, 4);
    EXPECT_EQ(n.rcfw(Msg(112).put(0, 1, spec::op_initialize_fw).put(108, 4, id))->status, 0);
    EXPECT_EQ(n.rcfw(Msg(112).put(0, 1, spec::op_initialize_fw).put(108, 4, id))->status, 1);
    // §4.6.3: the stats context is held until DEINITIALIZE_FW.
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x00B1).put(16, 4, id)), 0, 2), 0x11u);
    EXPECT_EQ(n.rcfw(Msg(16).put(0, 1, spec::op_deinitialize_fw))->status, 0);
    EXPECT_EQ(n.rcfw(add_gid(1))->status, 3);  // gated again
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x00B1).put(16, 4, id)), 0, 2), 0u);
}

TEST(BnxtModelRcfw, CmdqAndCreqWrapAroundManyTimes) {
    Node n;
    n.up(16);  // a 16-slot CMDQ: a 3-slot ADD_GID wraps slot by slot
    for (int i = 0; i < 200; ++i) {
        const auto a = n.rcfw(add_gid(static_cast<std::uint8_t>(100 + i % 50)));
        ASSERT_TRUE(a) << i;
        ASSERT_EQ(a->status, 0) << i;
        const auto d = n.rcfw(Msg(24).put(0, 1, spec::op_delete_gid).put(16, 2, a->xid));
        ASSERT_TRUE(d) << i;
        ASSERT_EQ(d->status, 0) << i;
    }
    // 400 completions through a 64-entry CREQ: it wrapped 6 times, phase flipping each time.
    EXPECT_EQ(n.creq.epoch, (404u / 64u) % 2);
    EXPECT_EQ(n.counters().bad_descriptors, 0u);
}

TEST(BnxtModelRcfw, ManyCommandsBehindOneTriggerRunInOrder) {
    Node n;
    n.up();
    std::vector<std::uint16_t> cookies;
    for (int i = 0; i < 5; ++i) {
        cookies.push_back(n.cookie);
        submit(n, add_gid(static_cast<std::uint8_t>(20 + i)));
    }
    trigger(n);
    for (int i = 0; i < 5; ++i) {
        const auto e = n.creq_take();
        ASSERT_TRUE(e);
        EXPECT_EQ(get(*e, 2, 2), cookies[i]);
        EXPECT_EQ(get(*e, 4, 4), static_cast<std::uint64_t>(i + 1));  // GID indexes after the node's own, in order
    }
}

TEST(BnxtModelRcfw, FullCreqStallsTheChannelUntilTheConsumerMoves) {
    Node n;
    n.creq = n.ring_alloc(4, 0);
    n.cmdq_depth = 16;
    n.cmdq = n.bus.alloc(256);
    n.w32(0x600, static_cast<std::uint32_t>(n.cmdq));
    n.w32(0x604, static_cast<std::uint32_t>(n.cmdq >> 32));
    n.w32(0x608, (16u << 2) | (std::uint32_t{n.creq.id} << 16));
    n.w32(0x60C, 0);
    for (int i = 0; i < 6; ++i) submit(n, query_version());
    trigger(n);
    // Four entries fit; the fifth command waits. Reading one entry frees one slot.
    const std::uint64_t fifth = n.creq.memory.at(0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(n.bus.get(n.creq.memory.at(16u * i) + 8, 1) & 1, 1u);
    EXPECT_EQ(get(*n.creq_take(), 2, 2), 0u);    // takes entry 0 and rings the NQ doorbell
    EXPECT_EQ(n.bus.get(fifth + 8, 1) & 1, 0u);  // entry 0 rewritten on the second pass: phase 0
    EXPECT_EQ(n.bus.get(fifth + 2, 2), 4u);      // ... by the fifth command
    for (int i = 1; i < 6; ++i) {
        const auto e = n.creq_take();
        ASSERT_TRUE(e) << i;
        EXPECT_EQ(get(*e, 2, 2), static_cast<std::uint64_t>(i));
    }
    EXPECT_FALSE(n.creq_take());
}

TEST(BnxtModelRcfw, CommandShorterThanItsOldestLayoutIsInvalidParameter) {
    Node n;
    n.up();
    // CREATE_CQ: sizes 48/56/64 seen; 32 bytes is none of them.
    EXPECT_EQ(n.rcfw(Msg(32).put(0, 1, spec::op_create_cq))->status, 5);
}

TEST(BnxtModelRcfw, CommandLongerThanUpstreamIsAccepted) {
    Node n;
    n.up();
    const std::uint64_t page = n.bus.alloc(4096);
    // CREATE_CQ of 64 bytes (out-of-tree layout): trailing bytes are ignored.
    Msg m(64);
    m.put(0, 1, spec::op_create_cq).put(16, 8, 1).put(28, 4, n.nq.id).put(36, 4, 64).put(40, 8, page);
    EXPECT_EQ(n.rcfw(m)->status, 0);
}

TEST(BnxtModelRcfw, CommandLongerThanItsNewestLayoutIsInvalidParameter) {
    Node n;
    n.up();
    const std::uint64_t page = n.bus.alloc(4096);
    // CREATE_CQ: 48/56/64 seen; 80 bytes is longer than any.
    Msg m(80);
    m.put(0, 1, spec::op_create_cq).put(16, 8, 1).put(28, 4, n.nq.id).put(36, 4, 64).put(40, 8, page);
    EXPECT_EQ(n.rcfw(m)->status, 5);
    EXPECT_EQ(n.rcfw(Msg(32).put(0, 1, spec::op_query_version))->status, 5);  // 16 bytes, sent as 32
}

// §4.3 step 5: the first producer write after the channel starts carries bit 31 (RESET);
// until one has, the firmware's pointers are unset and no command runs (counted).
TEST(BnxtModelRcfw, FirstProducerWriteWithoutResetRunsNothing) {
    Node n;
    n.open_channel();
    n.cmdq_first = false;
    EXPECT_FALSE(n.rcfw(query_version()));
    EXPECT_EQ(n.counters().bad_descriptors, 1u);
    n.cmdq_prod = 0;  // the command above is still in slot 0
    n.cmdq_first = true;
    const auto c = n.rcfw(query_version());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 0);
}

// §4.6.3 on P5: no context tables (they came from BACKING_STORE_CFG), no VF shares (none
// exist), and HW_REQUESTER_RETX_SUPPORTED exactly where QUERY_FUNC reports the hardware's
// requester retransmission (Linux's bnxt_qplib_init_rcfw).
TEST(BnxtModelRcfw, InitializeFwRefusesContextTablesVfSharesAndUnreportedFlags) {
    for (bool retx : {false, true}) {
        ModelOptions o;
        o.hw_retransmission = retx;
        Node n(1, o);
        n.open_channel();
        const auto id = get(n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1)), 8, 4);
        auto init = [&](const std::function<void(Msg&)>& spoil) {
            Msg m(112);
            m.put(0, 1, spec::op_initialize_fw).put(108, 4, id).put(2, 2, retx ? 0x2 : 0);
            spoil(m);
            return n.rcfw(m)->status;
        };
        EXPECT_EQ(init([](Msg& m) { m.put(16, 1, 1).put(24, 8, 0x1000); }), 5);  // a QPC table
        EXPECT_EQ(init([](Msg& m) { m.put(72, 4, 64); }), 5);                    // number_of_qp
        EXPECT_EQ(init([](Msg& m) { m.put(88, 4, 8); }), 5);                     // max_qp_per_vf
        EXPECT_EQ(init([](Msg& m) { m.put(2, 2, 0x1); }), 5);                    // MRAV_RESERVATION_SPLIT
        EXPECT_EQ(init([](Msg& m) { m.put(2, 2, 0x8); }), 5);                    // OPTIMIZE_MODIFY_QP
        EXPECT_EQ(init([&](Msg& m) { m.put(2, 2, retx ? 0 : 0x2); }), 5);        // the other retransmission
        EXPECT_EQ(init([](Msg&) {}), 0);
        const std::uint64_t sb = n.bus.alloc(4096);
        ASSERT_EQ(n.rcfw(Msg(16).put(0, 1, spec::op_query_func), sb, 10)->status, 0);
        EXPECT_EQ(n.bus.get(sb + 22, 2), retx ? 0x200u : 0u);  // dev_cap_flags HW_REQUESTER_RETX_ENABLED
    }
}

// §4.6.5: a GID (with its VLAN) the table holds is not added twice.
TEST(BnxtModelRcfw, AddGidOfAGidTheTableHoldsIsInvalidParameter) {
    Node n;
    n.up();
    const auto first = n.rcfw(add_gid(7));
    ASSERT_TRUE(first && first->status == 0);
    EXPECT_EQ(n.rcfw(add_gid(7))->status, 5);
    EXPECT_EQ(n.rcfw(add_gid(7).put(38, 2, 0x9005))->status, 0);  // VLAN 5: another entry
    ASSERT_EQ(n.rcfw(Msg(24).put(0, 1, spec::op_delete_gid).put(16, 2, first->xid))->status, 0);
    EXPECT_EQ(n.rcfw(add_gid(7))->status, 0);  // deleted, it may come again
}

TEST(BnxtModelRcfw, UnknownAndUnsupportedOpcodesAnswerTheirStatus) {
    Node n;
    n.up();
    EXPECT_EQ(n.rcfw(Msg(16).put(0, 1, 0x7F))->status, 3);  // INVALID_CMD
    EXPECT_EQ(n.rcfw(Msg(48).put(0, 1, 0x05))->status, 4);  // CREATE_SRQ: NOT_IMPLEMENTED
}

TEST(BnxtModelRcfw, MalformedCommandSizeIsSkippedAndCounted) {
    Node n;
    n.up();
    Msg bad(16);
    bad.put(0, 1, spec::op_query_version);
    n.bus.poke(n.cmdq + (n.cmdq_prod % n.cmdq_depth) * 16, bad.b);  // cmd_size 0
    n.cmdq_prod = (n.cmdq_prod + 1) & 0xFFFF;
    trigger(n);
    EXPECT_FALSE(n.creq_take());
    EXPECT_EQ(n.counters().bad_descriptors, 1u);
    EXPECT_EQ(n.rcfw(query_version())->status, 0);  // the channel goes on
}

TEST(BnxtModelRcfw, RefusedCommandAnswersTheChosenStatusAndDoesNothing) {
    Node n;
    n.up();
    n.faults.refuse(hsi::Opcode::ALLOCATE_MRW, hsi::RcfwStatus::RESOURCES);
    EXPECT_EQ(n.rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(28, 4, 1))->status, 2);
    const auto ok = n.rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(28, 4, 1));
    EXPECT_EQ(ok->status, 0);
    EXPECT_EQ(ok->xid, 0x100u);  // the refused one allocated nothing: the first key
}

TEST(BnxtModelRcfw, DroppedCommandNeverCompletesAndTheNextOneDoes) {
    Node n;
    n.up();
    n.faults.drop(hsi::Opcode::QUERY_VERSION);
    EXPECT_FALSE(n.rcfw(query_version()));
    const auto c = n.rcfw(query_version());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 0);
}

TEST(BnxtModelRcfw, StaleCommandCompletesWithThePreviousCookie) {
    Node n;
    n.up();
    n.faults.stale(hsi::Opcode::QUERY_VERSION);
    const std::uint16_t cookie = n.cookie;
    Msg c = query_version();
    submit(n, c);
    trigger(n);
    const auto e = n.creq_take();
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 2, 2), static_cast<std::uint16_t>(cookie - 1));
}

TEST(BnxtModelRcfw, ArmedCreqRaisesItsVectorOnceUntilArmedAgain) {
    Node n;
    n.open_channel();  // arms the CREQ (NQ_ARM, index 0): vector 0
    EXPECT_EQ(n.bus.interrupts(0), 0u);
    n.rcfw(query_version());  // takes the entry and writes NQ (not NQ_ARM)
    EXPECT_EQ(n.bus.interrupts(0), 1u);
    n.rcfw(query_version());
    EXPECT_EQ(n.bus.interrupts(0), 1u);  // disarmed
    n.ring(doorbell(spec::db_nq_arm, n.creq.id, n.creq.index, n.creq.epoch));
    n.settle();
    n.rcfw(query_version());
    EXPECT_EQ(n.bus.interrupts(0), 2u);
}

TEST(BnxtModelRcfw, ArmingWithEntriesPendingInterruptsAtOnce) {
    Node n;
    n.open_channel();
    n.rcfw(query_version());  // vector 0 fired once and disarmed; entry consumed
    submit(n, query_version());
    trigger(n);  // an entry pending, not armed: no interrupt
    EXPECT_EQ(n.bus.interrupts(0), 1u);
    n.ring(doorbell(spec::db_nq_arm, n.creq.id, n.creq.index, n.creq.epoch));
    n.settle();
    EXPECT_EQ(n.bus.interrupts(0), 2u);
}

TEST(BnxtModelRcfw, ReopeningTheChannelWithTheResetBitStartsAtSlotZero) {
    Node n;
    n.open_channel(64, 16);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(n.rcfw(query_version())->status, 0);
    // §4.2/§4.3: a new mailbox, producer written with bit 31: the firmware starts over.
    const std::uint64_t cmdq = n.bus.alloc(256);
    n.w32(0x600, static_cast<std::uint32_t>(cmdq));
    n.w32(0x604, static_cast<std::uint32_t>(cmdq >> 32));
    n.w32(0x608, (16u << 2) | (std::uint32_t{n.creq.id} << 16));
    n.w32(0x60C, 0);
    n.cmdq = cmdq;
    n.cmdq_prod = 0;
    n.cmdq_first = true;
    const auto c = n.rcfw(query_version());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 0);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
