// CQE and NQ entry layouts (docs/hsi.md §5.5, §5.6), pinned to bytes placed at the
// offsets of the spec's tables by hand.
#include "rig/bnxt/hsi/cqe.hpp"

#include <gtest/gtest.h>

#include "bytes.hpp"

namespace rig::bnxt::hsi {
namespace {

using test::Bytes;
using test::expect_layout;

TEST(Cqe, RequesterCqeMatchesSpecTable) {
    CqeReq c{};
    c.qp_handle = 0x1122334455667788;
    c.sq_cons_idx = 6;
    c.cqe_type_toggle = cqe_type_toggle(CqeType::REQ, 1);
    c.status = static_cast<std::uint8_t>(CqeReqStatus::REMOTE_ACCESS_ERR);
    expect_layout(c, Bytes(32).put(0, 8, 0x1122334455667788).put(8, 2, 6).put(24, 1, 0x01).put(25, 1, 0x07));
}

TEST(Cqe, ResponderRcCqeMatchesSpecTable) {
    CqeResRc c{};
    c.length = 4096;
    c.imm_data_or_inv_r_key = 0xCAFEF00D;
    c.qp_handle = 0x0102030405060708;
    c.mr_handle = 0x1112131415161718;
    c.cqe_type_toggle = cqe_type_toggle(CqeType::RES_RC, 0);
    c.status = static_cast<std::uint8_t>(CqeResStatus::LOCAL_LENGTH_ERR);
    c.flags = static_cast<std::uint16_t>(cqe_res_flags::IMM(1) | cqe_res_flags::RDMA(1));
    c.srq_or_rq_wr_id = static_cast<std::uint32_t>(cqe_res_flags::srq_or_rq_wr_id(0xFFFFF));
    Bytes b(32);
    b.put(0, 4, 4096).put(4, 4, 0xCAFEF00D).put(8, 8, 0x0102030405060708).put(16, 8, 0x1112131415161718);
    b.put(24, 1, 0x02).put(25, 1, 0x02).put(26, 2, 0x0A).put(28, 4, 0xFFFFF);
    expect_layout(c, b);
}

TEST(Cqe, TerminalCqeMatchesSpecTable) {
    CqeTerminal c{};
    c.qp_handle = 0x99;
    c.sq_cons_idx = 3;
    c.rq_cons_idx = 0xFFFF;
    c.cqe_type_toggle = cqe_type_toggle(CqeType::TERMINAL, 1);
    expect_layout(c, Bytes(32).put(0, 8, 0x99).put(8, 2, 3).put(10, 2, 0xFFFF).put(24, 1, 0x1D));
}

TEST(Cqe, TypeByteValuesAreTheSpecTable) {
    // §5.5 "Byte value (toggle 0)".
    EXPECT_EQ(cqe_type_toggle(CqeType::REQ, 0), 0x00);
    EXPECT_EQ(cqe_type_toggle(CqeType::RES_RC, 0), 0x02);
    EXPECT_EQ(cqe_type_toggle(CqeType::RES_UD, 0), 0x04);
    EXPECT_EQ(cqe_type_toggle(CqeType::RES_RAWETH_QP1, 0), 0x06);
    EXPECT_EQ(cqe_type_toggle(CqeType::RES_UD_CFA, 0), 0x08);
    EXPECT_EQ(cqe_type_toggle(CqeType::NO_OP, 0), 0x1A);
    EXPECT_EQ(cqe_type_toggle(CqeType::TERMINAL, 0), 0x1C);
    EXPECT_EQ(cqe_type_toggle(CqeType::CUT_OFF, 0), 0x1E);
    EXPECT_EQ(cqe::cqe_type.of(0x1F), 0xFu);
    EXPECT_EQ(cqe::resize_toggle.of(0x60), 3u);  // [CORRECTED] bits 6:5
}

TEST(Cqe, StatusNamesAreTheSpecNames) {
    EXPECT_EQ(name(CqeReqStatus::LOCAL_PROTECTION_ERR), "LOCAL_PROTECTION_ERR");
    EXPECT_EQ(name(static_cast<CqeReqStatus>(0x9)), "RNR_NAK_RETRY_CNT_ERR");
    EXPECT_EQ(name(static_cast<CqeReqStatus>(0xB)), "WORK_REQUEST_FLUSHED_ERR");
    EXPECT_EQ(name(static_cast<CqeResStatus>(0x7)), "WORK_REQUEST_FLUSHED_ERR");
    EXPECT_EQ(name(static_cast<CqeResStatus>(0x3)), "LOCAL_PROTECTION_ERR");
    EXPECT_EQ(name(static_cast<CqeResStatus>(0x9)), "");
}

TEST(Cqe, NqCqNotificationMatchesSpecTable) {
    NqCn n{};
    n.type = static_cast<std::uint16_t>(nq::type(static_cast<std::uint8_t>(NqType::CQ_NOTIFICATION)));
    n.cq_handle_low = 0x55667788;
    n.v = 1;
    n.cq_handle_high = 0x11223344;
    expect_layout(n, Bytes(16).put(0, 2, 0x30).put(4, 4, 0x55667788).put(8, 4, 1).put(12, 4, 0x11223344));

    NqBase b{};
    b.info10_type = 0x38;
    b.info16 = 0x0102;
    b.info32 = 0x03040506;
    b.info63_v = {1, 0x0708090A};
    expect_layout(
        b, Bytes(16).put(0, 2, 0x38).put(2, 2, 0x0102).put(4, 4, 0x03040506).put(8, 4, 1).put(12, 4, 0x0708090A));
}

}  // namespace
}  // namespace rig::bnxt::hsi
