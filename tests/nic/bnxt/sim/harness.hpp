// tests/nic/bnxt/sim/harness.hpp: a test "driver" for the bnxt model, written from the
// tables of docs/hsi.md with byte offsets and values by hand (never through the hsi
// structs the model itself uses, so an offset both got wrong cannot pass). One Node is a
// model on a fake machine of its own (FakeBus, ManualClock), stepped by hand unless a test
// starts its thread.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fake_bus.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/bnxt/sim/testing/faults.hpp"
#include "rig/bnxt/sim/wire.hpp"

namespace rig::bnxt::sim::test {

using Bytes = std::vector<std::byte>;
using Mac = std::array<std::uint8_t, 6>;
using Gid = std::array<std::uint8_t, 16>;

// A message assembled at the offsets of a spec table.
struct Msg {
    explicit Msg(std::size_t n) : b(n) {}
    Msg& put(std::size_t offset, unsigned width, std::uint64_t value);
    Msg& put_bytes(std::size_t offset, std::span<const std::uint8_t> bytes);
    Bytes b;
};

std::uint64_t get(std::span<const std::byte> b, std::size_t offset, unsigned width);
Bytes pattern(std::size_t n, std::uint32_t seed);

// Memory described by a page list (§2): 4 KiB pages allocated one by one (so they are not
// contiguous on the fake bus), PTE and PDE pages with VALID (and LAST / NEXT_TO_LAST for rings).
struct Memory {
    std::uint64_t pbl = 0;  // level 0: the buffer; 1: the PTE page; 2: the PDE page
    unsigned level = 0;
    std::vector<std::uint64_t> pages;  // level 0: one contiguous buffer
    std::uint64_t bytes = 0;
    std::uint64_t at(std::uint64_t offset) const;  // the bus address of a byte
};

struct Ring {  // an NQ-type ring (CREQ or NQ) as the driver tracks it
    std::uint16_t id = 0;
    Memory memory;
    std::uint32_t entries = 0;
    std::uint32_t index = 0;  // consumer
    std::uint32_t epoch = 0;  // consumer wrap parity; expected phase = 1 - epoch
};

struct Cq {
    std::uint32_t id = 0;
    std::uint64_t handle = 0;
    Memory memory;
    std::uint32_t size = 0;
    std::uint32_t index = 0;
    std::uint32_t epoch = 0;
};

struct Qp {
    std::uint32_t qpn = 0;
    std::uint64_t handle = 0;
    std::uint32_t sq_size = 0, rq_size = 0;
    Memory sq, rq;
    std::uint32_t sq_index = 0, sq_epoch = 0, rq_index = 0, rq_epoch = 0;
    std::uint32_t psn = 0;  // next SQ PSN, for the PSN search entries
    std::uint32_t mtu = 1024;
    std::uint32_t pd = 1;
    Cq* scq = nullptr;
    Cq* rcq = nullptr;
};

struct Completion {
    std::uint8_t status = 0xFF;
    std::uint32_t xid = 0;
    Bytes raw;  // the 16-byte CREQ entry
};

struct Cqe {
    Bytes raw;  // 32 bytes
    std::uint8_t type() const { return static_cast<std::uint8_t>((get(raw, 24, 1) >> 1) & 0xF); }
    std::uint8_t status() const { return static_cast<std::uint8_t>(get(raw, 25, 1)); }
    std::uint64_t req_qp_handle() const { return get(raw, 0, 8); }
    std::uint16_t sq_cons_idx() const { return static_cast<std::uint16_t>(get(raw, 8, 2)); }
    std::uint32_t length() const { return static_cast<std::uint32_t>(get(raw, 0, 4)); }
    std::uint32_t imm() const { return static_cast<std::uint32_t>(get(raw, 4, 4)); }
    std::uint64_t res_qp_handle() const { return get(raw, 8, 8); }
    std::uint16_t flags() const { return static_cast<std::uint16_t>(get(raw, 26, 2)); }
    std::uint32_t wr_id() const { return static_cast<std::uint32_t>(get(raw, 28, 4) & 0xFFFFF); }
};

struct Sge {
    std::uint64_t va;
    std::uint32_t lkey;
    std::uint32_t size;
};

// Values of the spec's tables the harness writes (each with its section).
namespace spec {
inline constexpr std::uint64_t doorbell_page = 0x10000;  // §1.4 PF
inline constexpr std::uint8_t op_create_qp = 0x01, op_destroy_qp = 0x02, op_modify_qp = 0x03, op_query_qp = 0x04,
                              op_create_cq = 0x09, op_destroy_cq = 0x0A, op_allocate_mrw = 0x0D,
                              op_deallocate_key = 0x0E, op_register_mr = 0x0F, op_deregister_mr = 0x10,
                              op_add_gid = 0x11, op_delete_gid = 0x12, op_initialize_fw = 0x80,
                              op_deinitialize_fw = 0x81, op_query_func = 0x83, op_query_version = 0x8B;
inline constexpr std::uint8_t wqe_send = 0x00, wqe_send_imm = 0x01, wqe_write = 0x04, wqe_write_imm = 0x05,
                              wqe_read = 0x06, wqe_recv = 0x80;
inline constexpr std::uint8_t signal_comp = 0x01, solicited = 0x08, inline_data = 0x10;              // §5.2 flags
inline constexpr std::uint8_t mr_local_write = 0x01, mr_remote_read = 0x02, mr_remote_write = 0x04;  // §6.4
inline constexpr std::uint8_t qp_local_write = 0x01, qp_remote_write = 0x02, qp_remote_read = 0x04;
inline constexpr std::uint64_t db_sq = 0x0, db_rq = 0x1, db_cq = 0x4, db_cq_armse = 0x5, db_cq_armall = 0x6,
                               db_cq_armena = 0x7, db_nq = 0xA, db_nq_arm = 0xB;
}  // namespace spec

// The 64-bit doorbell of §5.8.1, worked from its table: index 23:0, epoch 24, xid 51:32,
// path 57:56 (0), valid 58, type 63:60.
std::uint64_t doorbell(std::uint64_t type, std::uint32_t xid, std::uint32_t index, std::uint32_t epoch);

// What a Node does before a test: Hwrm runs the HWRM bring-up the firmware requires before
// rings (boot); None leaves the function as power-on left it.
enum class Boot { Hwrm, None };

class Node {
public:
    explicit Node(std::uint8_t mac_last = 1, ModelOptions options = {}, Boot boot = Boot::Hwrm);
    // A port of MAC `mac` (gid ::ffff:10.0.0.<mac[5]> until a test sets it before up()).
    explicit Node(const Mac& mac, ModelOptions options = {}, Boot boot = Boot::Hwrm);
    ~Node();

    FakeBus bus;
    ManualClock clock;
    Model nic;
    testing::Faults faults;
    Mac mac{};
    Gid gid{};
    std::uint16_t gid_index = 0;
    std::uint8_t network = 2;  // MODIFY_QP network_type (§4.6.9): 0 RoCEv1, 2 RoCEv2/IPv4, 3 RoCEv2/IPv6

    void w32(std::uint64_t offset, std::uint32_t value) { nic.write(0, offset, 4, value); }
    std::uint32_t r32(std::uint64_t offset) { return static_cast<std::uint32_t>(nic.read(0, offset, 4)); }
    void ring(std::uint64_t value) { nic.write(2, spec::doorbell_page, 8, value); }
    void settle() { nic.settle(); }

    Memory memory(std::uint64_t bytes, unsigned level, bool ring_flags);

    // §3.1: fills the header (req_type at 0 must be set by the caller; cmpl_ring,
    // seq_id, target_id, resp_addr here), writes the window with 32-bit stores, zero-fills
    // it to 128 bytes, triggers, settles. The response's resp_len bytes, or empty if the
    // valid byte never came.
    Bytes hwrm(Msg request);
    // §3.1 short mode: the request in DMA memory, the 16-byte descriptor in the window.
    Bytes hwrm_short(Msg request);
    std::uint16_t seq = 0x100;

    // §7.1 steps 3 to 8 as the firmware requires them before rings: VER_GET, DRV_RGTR,
    // BACKING_STORE_QCAPS, QUEUE_QPORTCFG (where QCAPS gives no fast-path TQM ring count)
    // and a BACKING_STORE_CFG (short mode) with contexts for `qps` RoCE queue pairs, `cqs`
    // CQs and `mrs` regions. The CFG's status (0 where it was taken).
    std::uint16_t boot(std::uint32_t qps = 1024, std::uint32_t cqs = 1024, std::uint32_t mrs = 8192);
    // The 336-byte BACKING_STORE_CFG boot sends, for tests to spoil one field of.
    Msg backing_store_cfg(std::uint32_t qps, std::uint32_t cqs, std::uint32_t mrs);
    std::uint64_t resp = 0;  // response buffer (4 KiB)

    Ring ring_alloc(std::uint32_t entries, std::uint16_t vector, std::uint8_t int_mode = 2);
    // §4.2: CREQ ring, CMDQ (level 0), mailbox, NQ_ARM on the CREQ.
    void open_channel(std::uint32_t creq_entries = 64, std::uint32_t cmdq_depth = 16);
    // §4.3: writes the command (cmd_size and cookie filled here, resp_addr/resp_size
    // when a side buffer is given) into the CMDQ, bumps the producer, triggers, settles;
    // then takes one CREQ entry if its phase says it is new and acknowledges it with an NQ
    // doorbell. nullopt if none came.
    std::optional<Completion> rcfw(Msg command, std::uint64_t side_buffer = 0, std::uint8_t side_units = 0);
    std::optional<Bytes> creq_take();
    // Asynchronous CREQ entries (QP error 0xC0, CQ error 0xC1) met while waiting for a
    // completion, and any still on the CREQ.
    std::vector<Bytes> events();
    std::vector<Bytes> pending_events;
    Ring creq;
    std::uint64_t cmdq = 0;
    std::uint32_t cmdq_depth = 0;
    std::uint32_t cmdq_prod = 0;
    bool cmdq_first = true;
    std::uint16_t cookie = 0;

    // Everything of §7.1 the data path needs: channel, STAT_CTX_ALLOC, INITIALIZE_FW, one NQ
    // (ring id in `nq`), ADD_GID of ::ffff:10.0.0.<mac_last>.
    void up(std::uint32_t cmdq_depth = 16);
    Ring nq;
    std::uint32_t stat_ctx = 0;

    Cq create_cq(std::uint32_t entries);
    Qp create_qp(Cq& scq, Cq& rcq, std::uint32_t sq_size, std::uint32_t rq_size, std::uint8_t sq_sge = 6,
                 std::uint8_t rq_sge = 6, std::uint32_t pd = 1);
    // ALLOCATE_MRW + REGISTER_MR; returns the key. level 0 with pbl 0, va 0, size ~0 is the DMA MR.
    std::uint32_t register_mr(std::uint8_t type, std::uint8_t access, unsigned level, unsigned log2_page,
                              std::uint64_t pbl, std::uint64_t va, std::uint64_t size, std::uint32_t pd = 1,
                              std::uint16_t flags = 0, std::uint8_t* status = nullptr);
    std::uint32_t dma_mr(std::uint8_t access, std::uint32_t pd = 1);
    std::uint8_t modify(Qp& qp, std::uint32_t mask, std::uint8_t state, const std::function<void(Msg&)>& fill = {});
    // One transition each, with the masks Linux issues (§4.6.9, §7.2); the status.
    std::uint8_t to_init(Qp& qp, std::uint8_t access = 0x07);
    std::uint8_t to_rtr(Qp& qp, const Node& peer, const Qp& peer_qp, std::uint8_t mtu_code = 2,
                        std::uint8_t irrq_slots = 4);
    // The same towards a peer given by its address vector; `irrq_slots` is MODIFY_QP's
    // max_dest_rd_atomic (2 x responder depth + 2, §4.6.9).
    std::uint8_t to_rtr(Qp& qp, const Gid& dgid, const Mac& dmac, std::uint32_t dest_qpn, std::uint32_t rq_psn,
                        std::uint8_t mtu_code = 2, std::uint8_t irrq_slots = 4);
    std::uint8_t to_rts(Qp& qp, std::uint8_t rnr_retry = 7, std::uint8_t timeout = 14, std::uint8_t retry_cnt = 7);
    // RESET->INIT->RTR->RTS of a and b against each other.
    static void connect(Node& a, Qp& qa, Node& b, Qp& qb, std::uint8_t mtu_code = 2, std::uint8_t access = 0x07,
                        std::uint8_t rnr_retry = 7, std::uint8_t timeout = 14, std::uint8_t retry_cnt = 7);

    // §5.2-§5.4: a send WQE with its PSN search entry, then the SQ doorbell (unless ring is false).
    void post_send(Qp& qp, std::uint8_t type, std::uint8_t flags, const std::vector<Sge>& sges, std::uint32_t imm = 0,
                   std::uint64_t remote_va = 0, std::uint32_t rkey = 0, bool ring = true);
    void post_inline(Qp& qp, std::span<const std::byte> data, std::uint8_t flags = spec::signal_comp);
    void ring_sq(Qp& qp) { ring(doorbell(spec::db_sq, qp.qpn, qp.sq_index, qp.sq_epoch)); }
    // §5.3: an RQ WQE, then the RQ doorbell.
    void post_recv(Qp& qp, std::uint32_t wr_id, const std::vector<Sge>& sges, bool ring = true);
    // §5.5.4: the CQE at the consumer if its toggle says it is new; then the CQ doorbell.
    std::optional<Cqe> poll(Cq& cq, bool ring = true);
    // All CQEs there are now.
    std::vector<Cqe> drain(Cq& cq);
    // §5.6: the NQ entry at the consumer if new; then the NQ doorbell (NQ_ARM if arm).
    std::optional<Bytes> nq_take(Ring& ring, bool arm = false);

    testing::Counters counters() { return faults.counters(); }
};

// Steps both nodes until neither has work (bounded).
void settle(Node& a, Node& b);

// For models on their threads: polls `cq` until `n` CQEs came or a generous deadline
// passed (a hang guard only).
std::vector<Cqe> wait_for(Node& node, Cq& cq, std::size_t n);

}  // namespace rig::bnxt::sim::test
