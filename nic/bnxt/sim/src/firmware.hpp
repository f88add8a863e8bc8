// firmware.hpp: the state behind a bnxt model's BARs and the code that changes it: the
// HWRM and RCFW channels, NQs, CQs, the memory-region table and RC queue pairs
// (docs/hsi.md §3-§6). Private to rig_bnxt_sim.
//
// Threading: a Firmware is only touched by the thread that runs the model's step (the
// Model serializes steps), so nothing here locks. It reaches memory only through its Bus,
// and the wire only through the Transmitter it is given.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dma.hpp"
#include "packet.hpp"
#include "ring.hpp"
#include "rig/bnxt/hsi/cqe.hpp"
#include "rig/bnxt/hsi/hwrm.hpp"
#include "rig/bnxt/hsi/rcfw.hpp"
#include "rig/bnxt/hsi/wqe.hpp"
#include "rig/bnxt/sim/model.hpp"

namespace rig::bnxt::sim::detail {

using Bytes = std::vector<std::byte>;
using Nanoseconds = std::chrono::nanoseconds;

// ModelOptions::address as a GID (IPv4-mapped for IPv4); nullopt for "". Throws
// std::invalid_argument naming the text where it is neither a numeric IPv4 nor IPv6 address.
std::optional<Gid> parse_address(const std::string& text);
// "::ffff:10.0.0.1", "fe80::1": a GID for a message.
std::string address_text(const Gid& gid);
// §5.8.3, §5.8.4 (mainline numbering): DPI n is the 4 KiB page n above the privileged
// doorbell page at BAR2 + 0x10000, DPI 0 the privileged page itself; BAR2's 128 KiB hold
// 16 of them (QUERY_FUNC max_dpi).
inline constexpr std::uint32_t dpi_pages = 16;
inline constexpr std::uint32_t max_pd = 0x10000;  // QUERY_FUNC max_pd
// The firmware version both channels report (HWRM_VER_GET, QUERY_VERSION).
inline constexpr std::uint8_t firmware_major = 230;
// §4.6.3: INITIALIZE_FW with DRV_VERSION carries the driver's version after its 112 bytes.
inline constexpr std::size_t initialize_fw_with_version_bytes = 128;

// Faults a test planned (testing::Faults). Shared between the test's thread and the
// step, so it locks.
enum class FaultKind { refuse, drop, stale, truncate };
struct PlannedFault {
    FaultKind kind;
    std::uint16_t code;  // HwrmError or RcfwStatus for refuse
    unsigned times;
};
class FaultPlan {
public:
    void plan_hwrm(hsi::ReqType type, PlannedFault f);
    void plan_rcfw(hsi::Opcode op, PlannedFault f);
    void plan_frame_drops(unsigned count);
    void plan_cqe_rewrite(std::function<void(std::span<std::byte, 32>)> rewrite, unsigned times);
    void clear();
    std::optional<PlannedFault> take_hwrm(std::uint16_t type);
    std::optional<PlannedFault> take_rcfw(std::uint8_t op);
    bool take_frame_drop();
    // Applies a planned rewrite to a CQE about to be written (its toggle is set after).
    void rewrite_cqe(std::span<std::byte, 32> cqe);
    // testing::Faults::tamper: a hostile device changes what it is about to write or answer.
    void plan_tamper(testing::Faults::Tamper tamper);
    void tamper(testing::Written what, std::span<std::byte> bytes);

private:
    std::mutex mutex_;
    testing::Faults::Tamper tamper_;
    std::atomic<bool> tamper_armed_{false};  // read without the mutex on every write
    std::function<void(std::span<std::byte, 32>)> cqe_rewrite_;
    unsigned cqe_rewrites_ = 0;
    std::atomic<bool> cqe_rewrite_armed_{false};  // read without the mutex on every CQE
    std::multimap<std::uint16_t, PlannedFault> hwrm_;
    std::multimap<std::uint8_t, PlannedFault> rcfw_;
    std::atomic<unsigned> frame_drops_{0};  // read without the mutex on every frame sent
};

// What arrives from the BARs and the wire, in order.
struct Event {
    enum class Kind { hwrm, cmdq_init, cmdq_trigger, doorbell, frame };
    Kind kind;
    // cmdq_trigger: the producer register; doorbell: the value; frame: from_wire, or 0
    // for one this port sent itself (loopback).
    std::uint64_t value = 0;
    Bytes bytes;               // hwrm: the window; cmdq_init: the mailbox
    Frame frame;               // frame
    std::uint64_t offset = 0;  // doorbell: its BAR2 offset
    static constexpr std::uint64_t from_wire = 1;
    bool is_from_wire() const { return kind == Kind::frame && value == from_wire; }
};

// The host's side of the port's neighbour table (Model::resolve, neighbour.cpp): the lookups
// waiting for an answer and the answers the port took for them. The port records an ARP
// reply or neighbour advertisement only for an address a lookup asked for. Shared between
// the model's step and resolve's thread: it locks.
class Neighbours {
public:
    // A lookup of `address` begins; it waits (wait) until it ends (forget).
    void ask(const Gid& address);
    void forget(const Gid& address);
    // From the step: `address` is at `mac`, where a lookup asked for it. Whether one did.
    bool answer(const Gid& address, const Mac& mac);
    // The answer for `address`, waited for until `clock` reaches `deadline`: woken by the
    // answer, else looking at the clock every millisecond, so a test's ManualClock moved by
    // hand ends the wait and nothing sleeps a real timeout (nic.hpp: timers run on
    // ModelOptions::clock).
    std::optional<Mac> wait(const Gid& address, Nanoseconds deadline, const ModelClock& clock);

private:
    struct Lookup {
        Gid address;
        std::optional<Mac> mac;
        unsigned askers = 0;
    };
    std::mutex mutex_;
    std::condition_variable answered_;
    std::vector<Lookup> lookups_;
};

// Where the Firmware's frames are built and where they go (implemented by the Model): a
// buffer to build a frame in, then the wire, or this port's own inbox for a QP connected
// to a QP of this port (loopback, §7.2), which never reaches the wire.
class Transmitter {
public:
    enum class To { wire, self };
    virtual Frame frame() = 0;  // empty, with the capacity of a frame used before
    virtual void send(Frame frame, To to) = 0;

protected:
    ~Transmitter() = default;
};

// An NQ-type ring (§3.12): a RoCE NQ or the CREQ.
struct NqRing {
    std::uint16_t id = 0;
    std::uint16_t logical_id = 0;  // MSI-X vector
    hsi::IntMode int_mode = hsi::IntMode::POLL;
    PageList memory;
    std::uint32_t length = 0;  // 16-byte entries, a power of two
    Position producer;
    Position consumer;
    bool armed = false;
    std::size_t cq_users = 0;
};

enum class CqArm { none, solicited, all };

struct Cq {
    std::uint32_t id = 0;
    std::uint64_t handle = 0;
    std::uint32_t dpi = 0;  // the doorbell page it is rung through (§5.8.4)
    PageList memory;
    std::uint32_t size = 0;  // CQEs
    std::uint16_t nq = 0;    // cnq_id
    Position producer;
    Position consumer;
    CqArm arm = CqArm::none;
    bool arm_enabled = false;         // CQ_ARMENA seen since the last notification
    std::deque<Position> solicited;   // solicited or error CQEs not yet released
    std::uint32_t notifications = 0;  // total_cnq_events
    bool overflowed = false;
    std::size_t qp_users = 0;
};

struct Mr {
    std::uint32_t key = 0;
    std::uint32_t pd = 0;
    hsi::MrwType type = hsi::MrwType::MR;
    std::uint64_t handle = 0;
    bool registered = false;
    std::uint64_t va = 0;
    std::uint64_t size = 0;
    std::uint8_t access = 0;  // mr_access encoding
    bool relaxed = false;     // REGISTER_MR ENABLE_RO
    unsigned log2_page = 12;
    PageList pages;
};

struct GidEntry {
    Gid gid{};  // wire order
    Mac mac{};  // wire order
    std::uint16_t vlan = 0;
};

struct Sge {
    std::uint64_t va = 0;
    std::uint32_t lkey = 0;
    std::uint32_t size = 0;
};

// A send-queue WQE the requester took (§5.7.1), until it completes.
struct SendWork {
    std::uint32_t index = 0;  // SQ WQE index
    hsi::WqeType type = hsi::WqeType::SEND;
    bool signaled = false;
    bool solicited = false;
    std::uint64_t length = 0;
    std::uint32_t immediate = 0;
    std::uint64_t remote_va = 0;
    std::uint32_t rkey = 0;
    std::vector<Sge> sges;
    Bytes inline_data;
    bool is_inline = false;
    std::uint32_t first_psn = 0;
    std::uint32_t npkts = 0;
    std::uint32_t sent = 0;        // packets (READ: request sent = npkts) transmitted since the last rewind
    std::uint32_t acked = 0;       // packets acknowledged; READ: response packets placed
    bool asked_mid = false;        // READ: asked for again from a response after the first
    bool holds_read_slot = false;  // READ: sent, so counted against the initiator depth until it completes
    bool done = false;
    hsi::CqeReqStatus status = hsi::CqeReqStatus::OK;
    hsi::ReqErrStateReason reason = hsi::ReqErrStateReason::NO_ERROR;
};

// The RQ WQE an inbound SEND is filling.
struct Receive {
    bool active = false;
    std::uint32_t wr_id = 0;
    std::vector<Sge> sges;
    std::uint64_t capacity = 0;
    std::uint64_t offset = 0;
};

// The RDMA WRITE an inbound message is performing.
struct InboundWrite {
    bool active = false;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint64_t length = 0;
    std::uint64_t offset = 0;
};

// An RDMA READ the responder took, kept to answer its duplicates (Linux rxe_resp.c
// struct resp_res; IBA 9.7.5.1.3): its PSNs and what its RETH asked for.
struct ReadRecord {
    std::uint32_t first_psn = 0;
    std::uint32_t last_psn = 0;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
};

// The outcome of a local memory access through SGEs.
enum class LocalResult { ok, protection, bus };

struct Qp {
    std::uint32_t qpn = 0;
    std::uint64_t handle = 0;
    std::uint32_t pd = 0;
    std::uint32_t dpi = 0;    // the doorbell page it is rung through (§5.8.4)
    std::uint32_t flags = 0;  // qp_flags
    hsi::QpState state = hsi::QpState::RESET;
    std::uint32_t scq = 0;
    std::uint32_t rcq = 0;
    PageList sq_memory;
    PageList rq_memory;
    std::uint32_t sq_size = 0;
    std::uint32_t rq_size = 0;
    std::uint8_t sq_sge = 0;
    std::uint8_t rq_sge = 0;

    // MODIFY_QP attributes (§4.6.9).
    std::uint8_t network_type = 0;
    bool en_sqd_async_notify = false;
    std::uint8_t access = 0;  // qp_access encoding
    std::uint16_t pkey = 0xFFFF;
    std::uint32_t qkey = 0;
    Gid dgid{};
    std::uint32_t flow_label = 0;
    std::uint16_t sgid_index = 0;
    std::uint8_t hop_limit = 0;
    std::uint8_t traffic_class = 0;
    Mac dest_mac{};
    std::uint8_t tos_dscp_tos_ecn = 0;
    std::uint8_t path_mtu = 0;  // PathMtu code
    std::uint8_t timeout = 0;
    std::uint8_t retry_cnt = 0;
    std::uint8_t rnr_retry = 0;
    std::uint8_t min_rnr_timer = 0;
    std::uint32_t rq_psn = 0;
    std::uint32_t sq_psn = 0;
    std::uint8_t max_rd_atomic = 0;       // ORRQ slots
    std::uint8_t max_dest_rd_atomic = 0;  // IRRQ slots
    std::uint16_t enable_cc = 0;
    std::uint32_t max_inline_data = 0;
    std::uint32_t dest_qp = 0;
    Mac src_mac{};
    std::uint16_t vlan = 0;

    // Send queue: producer from doorbells; next WQE to take; next WQE to complete.
    Position sq_producer;
    Position sq_next;
    Position sq_consumer;
    std::deque<SendWork> sending;
    bool sq_stopped = false;      // a WQE failed: take no more
    bool error_cqe = false;       // a REQ CQE with an error status was written (since RESET)
    std::uint32_t next_psn = 0;   // PSN of the next WQE taken
    std::uint32_t sent_end = 0;   // the PSN after the last packet sent (READ: after its responses)
    std::uint32_t in_flight = 0;  // packets sent and not acknowledged
    unsigned retries_left = 0;
    unsigned rnr_left = 0;
    std::optional<Nanoseconds> retry_deadline;
    std::optional<Nanoseconds> rnr_deadline;
    // The PSN the last go-back on a sequence NAK or an implied NAK resent from: a NAK or
    // implied NAK of the same PSN does not go back again (the local ACK timer does).
    std::optional<std::uint32_t> went_back_to;

    // Receive queue and responder.
    Position rq_producer;
    Position rq_consumer;
    std::uint32_t epsn = 0;
    bool nak_sent = false;
    std::uint32_t unacknowledged = 0;  // requests taken since the last ACK
    // The PSN of the last duplicate request of the run of them met since a request was
    // last taken (a requester resending from an earlier PSN starts a new run).
    std::optional<std::uint32_t> duplicate_run;
    std::uint32_t msn = 0;
    Receive receive;
    InboundWrite write;
    // The last READs taken, at most the responder depth (max_dest_rd_atomic), oldest first.
    std::deque<ReadRecord> reads;
};

class Firmware {
public:
    struct HwrmAnswer;  // an HWRM command's outcome (below)
    struct Answer;      // an RCFW command's outcome (below)
    Firmware(const ModelOptions& options, const ModelClock& clock, testing::Counters& counters, RxCounters& rx,
             FaultPlan& faults, Transmitter& transmitter, Neighbours& neighbours);

    void attach(rig::sim::Port* port) { bus_.attach(port); }
    // Leaves a frame event's buffer in `event` (the Model reuses it).
    void handle(Event& event);
    // Fires one timer that is due; false if none is.
    bool fire_timers();
    bool timers_pending() const;
    // Back to the state after power-on (FLR).
    void power_on();
    // What QUERY_QP would answer for `qpn` (testing::Faults::query_qp); nullopt: no such QP.
    std::optional<hsi::QueryQpSb> describe_qp(std::uint32_t qpn);
    std::optional<hsi::BackingStoreCfgRequest> backing_store() const { return context_.request; }
    // The GID at firmware index `index` (testing::Faults::gid); nullopt: none there.
    std::optional<std::array<std::uint8_t, 16>> gid(std::uint16_t index) const;
    // The port's addresses (neighbour.cpp): its GIDs, then ModelOptions::address. The IPv4 one
    // an ARP request goes from (0.0.0.0 where none); the IPv6 one a neighbour solicitation
    // for `target` goes from (link-local for a link-local target), :: where none.
    bool own_address(const Gid& address) const;
    std::optional<Mac> mac_of(const Gid& address) const;  // of an own address
    Gid ipv4_source() const;
    Gid ipv6_source(const Gid& target) const;
    // The request that asks for `target`'s MAC: ARP for an IPv4-mapped GID, else a
    // neighbour solicitation (Model::resolve sends it).
    Frame neighbour_request(const Gid& target);

private:
    // hwrm.cpp: §3. hwrm_execute runs the handler of the request's req_type, one per
    // command of §3.5 the model implements, named for it, from a table.
    void hwrm(Bytes window);
    HwrmAnswer hwrm_execute(std::span<const std::byte> request);
    HwrmAnswer ver_get(std::span<const std::byte> request);
    HwrmAnswer func_reset(std::span<const std::byte> request);
    HwrmAnswer func_qcaps(std::span<const std::byte> request);
    HwrmAnswer func_qcfg(std::span<const std::byte> request);
    HwrmAnswer func_cfg(std::span<const std::byte> request);
    HwrmAnswer func_drv_rgtr(std::span<const std::byte> request);
    HwrmAnswer func_drv_unrgtr(std::span<const std::byte> request);
    HwrmAnswer queue_qportcfg(std::span<const std::byte> request);
    HwrmAnswer ring_alloc(std::span<const std::byte> request);
    HwrmAnswer ring_free(std::span<const std::byte> request);
    HwrmAnswer stat_ctx_alloc(std::span<const std::byte> request);
    HwrmAnswer stat_ctx_free(std::span<const std::byte> request);
    // The bring-up order (hwrm.cpp): the error a command gets before its turn, or SUCCESS.
    hsi::HwrmError out_of_order(hsi::ReqType type) const;
    void function_reset();
    // backing_store.cpp: §3.11 HWRM_FUNC_BACKING_STORE_QCAPS and _CFG.
    HwrmAnswer func_backing_store_qcaps(std::span<const std::byte> request);
    HwrmAnswer func_backing_store_cfg(std::span<const std::byte> request);
    hsi::HwrmError configure_backing_store(std::span<const std::byte> request);

    // rcfw.cpp: §4 channel.
    void cmdq_init(std::span<const std::byte> mailbox);
    void cmdq_trigger(std::uint32_t producer);
    void cmdq_run();
    bool creq_post(std::span<const std::byte, 16> entry);
    // The handler of the command's opcode, one per command of the minimal subset, from a
    // table (rcfw.cpp); commands on objects in objects.cpp and qp.cpp.
    Answer rcfw_execute(std::span<const std::byte> command);
    Answer query_version(std::span<const std::byte> c);
    Answer query_func(std::span<const std::byte> c);
    Answer initialize_fw(std::span<const std::byte> c);
    Answer deinitialize_fw(std::span<const std::byte> c);

    // objects.cpp: §4.6 commands on CQs, QPs, MRs, GIDs.
    Answer create_cq(std::span<const std::byte> c);
    Answer destroy_cq(std::span<const std::byte> c);
    Answer create_qp(std::span<const std::byte> c);
    Answer destroy_qp(std::span<const std::byte> c);
    Answer query_qp(std::span<const std::byte> c);
    Answer allocate_mrw(std::span<const std::byte> c);
    Answer register_mr(std::span<const std::byte> c);
    Answer deregister_mr(std::span<const std::byte> c);
    Answer deallocate_key(std::span<const std::byte> c);
    Answer add_gid(std::span<const std::byte> c);
    Answer delete_gid(std::span<const std::byte> c);
    void destroy_roce_objects();

    // qp.cpp: MODIFY_QP (§4.6.9) and the error state (§5.7.4).
    Answer modify_qp(std::span<const std::byte> c);
    void enter_error(Qp& qp, bool notify, hsi::ReqErrStateReason req, hsi::ResErrStateReason res);
    void stop_queues(Qp& qp);
    void reset_queues(Qp& qp);

    // rings.cpp: doorbells (§5.8), NQ entries (§5.6), CQEs (§5.5).
    void doorbell(std::uint64_t value, std::uint64_t offset);
    bool nq_post(NqRing& nq, std::span<const std::byte, 16> entry, testing::Written what = testing::Written::nq);
    void nq_interrupt_if_pending(NqRing& nq);
    bool cq_post(Cq& cq, std::span<const std::byte, 32> cqe, bool solicited);
    void cq_notify(Cq& cq);
    bool post_req_cqe(Qp& qp, std::uint32_t index, hsi::CqeReqStatus status);
    bool post_res_cqe(Qp& qp, std::uint32_t length, std::uint32_t imm, std::uint16_t flags, std::uint32_t wr_id,
                      hsi::CqeResStatus status, bool solicited);

    // mr.cpp: the region table (§6).
    Mr* find_mr(std::uint32_t key);
    // Local access through an SGE of `qp`: OK, or the error the requester/responder reports.
    bool local_ok(const Qp& qp, const Sge& sge, bool write) const;
    std::optional<hsi::ResErrStateReason> remote_check(const Qp& qp, std::uint32_t rkey, std::uint64_t va,
                                                       std::uint64_t length, bool write);
    bool mr_copy_out(Mr& mr, std::uint64_t va, std::span<std::byte> out);
    bool mr_copy_in(Mr& mr, std::uint64_t va, std::span<const std::byte> in);
    // The bytes at message offset `offset` of a list of local SGEs: gather and scatter.
    LocalResult gather(const Qp& qp, const std::vector<Sge>& sges, std::uint64_t offset, std::span<std::byte> out);
    LocalResult scatter(const Qp& qp, const std::vector<Sge>& sges, std::uint64_t offset,
                        std::span<const std::byte> in);

    // requester.cpp: §5.7.1.
    void pump(Qp& qp);
    bool take_wqe(Qp& qp);
    bool send_work_packet(Qp& qp, SendWork& w);
    void complete_sends(Qp& qp);
    void on_ack(Qp& qp, const Packet& p);
    void on_read_response(Qp& qp, Packet& p);
    void acknowledge_through(Qp& qp, std::uint32_t psn, bool inclusive);
    void rewind(Qp& qp, std::uint32_t psn);
    // The PSN of the first packet not yet acknowledged (READ: the first response not yet
    // placed); nullopt when nothing is outstanding.
    std::optional<std::uint32_t> first_unacknowledged(const Qp& qp) const;
    // A sequence NAK (implied: false) or an implied NAK of `psn`: resends from it, once.
    void go_back(Qp& qp, std::uint32_t psn, bool implied);
    void fail_work(Qp& qp, SendWork& w, hsi::CqeReqStatus status, hsi::ReqErrStateReason reason);
    void restart_retry_timer(Qp& qp);
    void on_retry_timeout(Qp& qp);

    // responder.cpp: inbound packets; frames.cpp: the port's checks of what arrives.
    void frame(std::span<std::byte> bytes);
    // The QP a RoCE frame is for, its packet decoded into `p`; nullptr where it is dropped
    // (counted in rx_, and frames_dropped).
    Qp* accept(const std::expected<Packet, Malformed>& p);
    void drop(std::uint64_t RxCounters::*reason);
    // neighbour.cpp: an ARP or ICMPv6 frame, which the port takes itself (answered,
    // recorded for Neighbours, or dropped and counted): whether `bytes` was one.
    bool neighbour(std::span<const std::byte> bytes);
    bool arp(std::span<const std::byte> bytes);
    bool icmpv6(std::span<const std::byte> bytes);
    void respond(Qp& qp, Packet& p);
    void on_send(Qp& qp, Packet& p);
    void on_write(Qp& qp, Packet& p);
    void on_read_request(Qp& qp, const Packet& p, bool duplicate);
    bool take_receive(Qp& qp, Receive& out, hsi::CqeResStatus& status);
    void send_ack(Qp& qp, std::uint32_t psn, AethKind kind, std::uint8_t value);
    // The coalesced acknowledgement of request `p`, just taken (`last`: of its message).
    void acknowledge(Qp& qp, const Packet& p, bool last);
    void responder_error(Qp& qp, const Packet& p, NakCode nak, hsi::ResErrStateReason reason);
    // A class C error (IBA 9.9.3): the receive being filled fails with
    // REMOTE_INVALID_REQUEST_ERR, then responder_error with NAK Invalid Request.
    void invalid_request(Qp& qp, const Packet& p);
    // A frame to the QP's peer (its address vector, MODIFY_QP INIT->RTR): p's headers
    // written into `frame`, with room for `payload_bytes` after them, returned for the
    // caller to fill before transmit(qp, frame).
    std::span<std::byte> frame_for(const Qp& qp, Packet& p, std::size_t payload_bytes, Frame& frame);
    void transmit(const Qp& qp, Frame frame);
    // A packet of headers alone (a read request, an acknowledgement).
    void transmit(const Qp& qp, Packet p);

    Qp* find_qp(std::uint32_t qpn);
    Cq* find_cq(std::uint32_t id);
    NqRing* find_ring(std::uint16_t id);
    std::uint32_t mtu_bytes(const Qp& qp) const;

    const ModelOptions& options_;
    const ModelClock& clock_;
    testing::Counters& counters_;
    RxCounters& rx_;
    FaultPlan& faults_;
    Transmitter& transmitter_;
    Neighbours& neighbours_;
    Bus bus_;
    std::optional<Gid> address_;  // ModelOptions::address

    // §3 state.
    bool version_known_ = false;      // HWRM_VER_GET answered since power-on
    bool driver_registered_ = false;  // FUNC_DRV_RGTR, until DRV_UNRGTR or FUNC_RESET
    // What BACKING_STORE_CFG gave (§3.11): the RoCE objects of each kind the context
    // memory holds beside the L2 share; nothing until a CFG succeeded.
    struct ContextMemory {
        bool configured = false;
        std::uint32_t qps = 0;
        std::uint32_t cqs = 0;
        std::uint32_t mrs = 0;
        std::optional<hsi::BackingStoreCfgRequest> request;  // the CFG taken, for testing::Faults
    } context_;
    std::map<std::uint16_t, NqRing> rings_;
    std::map<std::uint32_t, bool> stat_ctxs_;  // id -> in use by INITIALIZE_FW
    std::uint16_t next_ring_id_ = 0;
    std::uint32_t next_stat_ctx_ = 0;

    // §4 channel.
    struct Channel {
        bool latched = false;
        PageList cmdq;
        std::uint32_t depth = 0;
        std::uint16_t creq = 0;
        std::uint16_t consumer = 0;  // free-running slot count, mod 2^16
        std::uint16_t producer = 0;
        bool reset = false;        // a producer write with RESET came since the latch
        bool initialized = false;  // INITIALIZE_FW succeeded
        std::uint32_t stat_ctx = 0;
    } channel_;

    // §4.6 objects.
    std::map<std::uint32_t, Cq> cqs_;
    std::map<std::uint32_t, Qp> qps_;
    std::map<std::uint32_t, Mr> mrs_;
    std::vector<std::optional<GidEntry>> gids_;
    std::uint32_t next_cq_ = 0;
    std::uint32_t next_qpn_ = 2;
    std::uint32_t next_mr_index_ = 0;
};

// An HWRM command's outcome: its status and, where SUCCESS, its response (resp_len and
// valid set; empty: the 16-byte header alone). hwrm() fills the header's echoed fields.
struct Firmware::HwrmAnswer {
    hsi::HwrmError error = hsi::HwrmError::SUCCESS;
    Bytes response;
    static HwrmAnswer fail(hsi::HwrmError e) {
        HwrmAnswer a;
        a.error = e;
        return a;
    }
};

// An RCFW command's outcome: status, the CREQ entry's command-specific bytes, and the
// side buffer (after its 8-byte header) for query commands.
struct Firmware::Answer {
    hsi::RcfwStatus status = hsi::RcfwStatus::SUCCESS;
    std::uint32_t xid = 0;             // completion bytes 4..7
    std::array<std::byte, 6> extra{};  // completion bytes 10..15
    Bytes side_buffer;                 // the whole side buffer, header included
    static Answer fail(hsi::RcfwStatus s) {
        Answer a;
        a.status = s;
        return a;
    }
};

// Little-endian field access on byte spans, for commands whose length the growth rule
// leaves open: a field beyond the command's end reads 0 (§0).
template <class T>
T load(std::span<const std::byte> bytes) {
    return rig::little_endian::load<T>(bytes);
}
template <class T>
Bytes bytes_of(const T& value) {
    const auto s = rig::little_endian::bytes_of(value);
    return Bytes(s.begin(), s.end());
}

}  // namespace rig::bnxt::sim::detail
