// tests/nic/bnxt/sim/pair.hpp: two bnxt models on two fake machines joined by a Wire (a
// fixture may unplug it and cable them otherwise), each brought up (§7.1) with one CQ,
// one RC QP connected to the other (§7.2), a DMA MR (§6.5) and a buffer.
#pragma once

#include "harness.hpp"

namespace rig::bnxt::sim::test {

struct PairConfig {
    std::uint32_t sq_size = 64;
    std::uint32_t rq_size = 64;
    std::uint32_t cq_size = 256;
    std::uint8_t mtu_code = 2;  // 1024 bytes
    std::uint8_t access = 0x07;
    std::uint8_t rnr_retry = 7;
    std::uint8_t timeout = 14;
    std::uint8_t retry_cnt = 7;
    std::uint64_t buffer_bytes = 1 << 20;
    std::uint8_t nq_int_mode = 2;  // 2 MSI-X, 3 poll: a fresh NQ (vector 2) when not 2
    bool connect = true;           // false: the QPs stay in RESET
};

class Pair : public ::testing::Test {
protected:
    void open(PairConfig config = {});
    // n bytes from A's buffer into a receive on B, then back by RDMA READ into A's zeroed
    // buffer; both compared with what was sent.
    void send_and_read_back(std::uint64_t n);

    Node a{1};
    Node b{2};
    std::optional<Wire> wire{std::in_place, a.nic, b.nic};
    Cq acq, bcq;
    Qp aqp, bqp;
    std::uint32_t akey = 0, bkey = 0;  // DMA MRs: LOCAL_WRITE | REMOTE_READ
    std::uint64_t abuf = 0, bbuf = 0;
};

// The QP state QUERY_QP reports (side buffer byte 12, bits 3:0).
std::uint8_t qp_state(Node& n, const Qp& qp);

}  // namespace rig::bnxt::sim::test
