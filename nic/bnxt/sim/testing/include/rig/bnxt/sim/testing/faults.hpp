// rig/bnxt/sim/testing/faults.hpp: test-only hooks into a bnxt model: fault injection and
// the model's fault counters. Only tests link rig_bnxt_sim_testing, whose include path is
// the only one with this header; driver code cannot include it.
//
// A planned fault applies to the next `times` commands of its kind, in arrival order
// (Faults::always: every one), then disarms. Thread safety: every member may be called
// while the model runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>

#include "rig/bnxt/hsi/hwrm.hpp"
#include "rig/bnxt/hsi/rcfw.hpp"
#include "rig/bnxt/hsi/rcfw_qp.hpp"
#include "rig/bnxt/sim/model.hpp"

namespace rig::bnxt::sim::testing {

// What a hostile device (Faults::tamper) may change, each just before the model writes or
// answers it: an HWRM response (§3.1, its valid byte written after), an RCFW side buffer
// (§4.5.3), a CREQ or NQ entry (§4.5.1, §5.6; its phase bit set after), a CQE (§5.5; its
// toggle set after), the value a BAR0 register read returns (8 bytes, little-endian; the
// low `width` bytes are returned).
enum class Written : std::uint8_t { hwrm_response, side_buffer, creq, nq, cqe, register_read };

// What the model saw that a correct driver never makes it see, and what it did.
struct Counters {
    std::uint64_t hwrm_commands = 0;          // HWRM requests executed (answered or not)
    std::uint64_t rcfw_commands = 0;          // CMDQ commands executed
    std::uint64_t bar_width_faults = 0;       // a register accessed at a width it does not decode (B23)
    std::uint64_t bar_unmapped = 0;           // an offset nothing decodes
    std::uint64_t doorbells = 0;              // doorbells accepted
    std::uint64_t doorbell_drops = 0;         // dropped: no valid bit, not RoCE, unknown xid or type,
                                              // queue in a state that takes none, index out of range
    std::uint64_t epoch_faults = 0;           // dropped because index and epoch do not lie between
                                              // the queue's consumer and one ring ahead (§5.8.2, B21)
    std::uint64_t doorbell_page_faults = 0;   // dropped: rung through another doorbell page than
                                              // the queue's DPI, or NQ / CQ_ARMENA not through the
                                              // privileged page (§5.8.3, §5.8.4)
    std::uint64_t dma_faults = 0;             // Port answered Unsupported Request or Completer Abort
    std::uint64_t pte_invalid = 0;            // a PTE/PDE without VALID (§2.1), used anyway
    std::uint64_t bad_descriptors = 0;        // malformed WQEs and commands (poison included)
    std::uint64_t psn_search_mismatches = 0;  // a PSN search entry unlike its WQE (§5.4)
    std::uint64_t interrupts = 0;             // MSI-X messages sent
    std::uint64_t nq_overflows = 0;           // notifications dropped: NQ full
    std::uint64_t frames_sent = 0;
    std::uint64_t frames_received = 0;
    std::uint64_t frames_dropped = 0;      // unplugged, wrong MAC/GID, unknown QP, injected
    std::uint64_t frame_buffers_made = 0;  // frames built in new memory: no spare, none in the
                                           // Wire's pool (a frame not on a Wire counts too)
    std::uint64_t retransmissions = 0;     // packets sent again (timeout, sequence NAK, RNR);
                                           // a READ request sent again counts one
    std::uint64_t rnr_naks_sent = 0;
    // The RC transport (IBA vol. 1 §9.7), requester side:
    std::uint64_t local_ack_timeouts = 0;      // the local ACK timer expired and the QP resent
    std::uint64_t sequence_naks_received = 0;  // NAK PSN sequence error; what went back on it:
    std::uint64_t go_backs = 0;                // resends begun by a sequence NAK or an implied NAK
    std::uint64_t implied_naks = 0;            // an ACK or read response past a missing READ response
    std::uint64_t retries_exceeded = 0;        // WQEs failed with TRANSPORT_RETRY_CNT_ERR
    // Responder side:
    std::uint64_t sequence_naks_sent = 0;  // one per gap in the request PSNs
    std::uint64_t out_of_sequence = 0;     // requests ahead of the expected PSN, dropped
    std::uint64_t duplicate_requests = 0;  // behind it: acknowledged (READ: answered) again
    std::uint64_t acks_sent = 0;           // ACK packets (not NAKs, not read responses)
};

class Faults {
public:
    static constexpr unsigned always = std::numeric_limits<unsigned>::max();

    explicit Faults(Model& nic);

    // HWRM: answer the next `times` requests of `type` with `error` (generic 16-byte
    // error response, §3.3); never answer them; answer with seq_id - 1 (nothing else);
    // answer SUCCESS in the generic 16-byte form (resp_len 16), shorter than the command's.
    void refuse(hsi::ReqType type, hsi::HwrmError error, unsigned times = 1);
    void drop(hsi::ReqType type, unsigned times = 1);
    void stale(hsi::ReqType type, unsigned times = 1);
    void truncate(hsi::ReqType type, unsigned times = 1);

    // RCFW: complete the next `times` commands of `opcode` with `status` (without
    // executing them); consume them without any CREQ entry; complete them with the
    // cookie - 1 (after executing them).
    void refuse(hsi::Opcode opcode, hsi::RcfwStatus status, unsigned times = 1);
    void drop(hsi::Opcode opcode, unsigned times = 1);
    void stale(hsi::Opcode opcode, unsigned times = 1);

    // Wire: drop the next `count` frames this model transmits (exercises retransmission).
    void drop_frames(unsigned count);
    // Puts `frame` into the port's receive queue as if it came from its cable; the next
    // step takes it through the port's checks (Model::rx_counters).
    void receive(std::span<const std::byte> frame);

    // A hostile or broken device: `rewrite` changes each of the next `times` CQEs the model
    // writes, its 32 bytes as the model built them (the toggle bit is set after, so the
    // driver sees it as new). `rewrite` runs on the model's thread.
    void rewrite_cqes(std::function<void(std::span<std::byte, 32>)> rewrite, unsigned times = 1);

    // A hostile device: `tamper` may change every byte the model is about to write or
    // answer of the kinds Written lists, until clear(). It runs on the model's thread (a
    // register read's on the reader's), under a lock of the model's: it must not call
    // the model or the driver.
    using Tamper = std::function<void(Written what, std::span<std::byte> bytes)>;
    void tamper(Tamper tamper);

    // Forgets every planned fault.
    void clear();

    Counters counters() const;

    // What the firmware holds, as QUERY_QP would answer it (§4.6.10) for queue pair `qpn`
    // and as ADD_GID stored the GID at firmware index `index` (§4.6.5); nullopt where
    // there is none.
    std::optional<hsi::QueryQpSb> query_qp(std::uint32_t qpn) const;
    std::optional<std::array<std::uint8_t, 16>> gid(std::uint16_t index) const;
    // The HWRM_FUNC_BACKING_STORE_CFG the firmware took (§3.11), as the driver sent it (a
    // legacy-length one with its missing fields 0); nullopt before one succeeded.
    std::optional<hsi::BackingStoreCfgRequest> backing_store() const;

private:
    Model::Impl* impl_;
};

}  // namespace rig::bnxt::sim::testing
