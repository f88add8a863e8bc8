// rig/bnxt/sim/model.hpp: a device model of the RoCE function of a Broadcom BCM57508 (P5),
// the firmware and DMA engine side of docs/hsi.md, as a rig::sim::Device.
//
// What it decodes (§1): BAR0 registers (HWRM window and trigger, firmware status, CMDQ
// mailbox, producer and trigger; 32-bit accesses only), BAR2 doorbells (one 8-byte store
// each, in the doorbell pages from 0x10000 on), BAR4 (nothing: reads 0, writes dropped).
// An access of another width, or to an offset nothing decodes, reads all ones, is dropped
// and is counted (B23; testing::Faults::counters). It reads requests and writes responses,
// CREQ/NQ entries, CQEs and data only through its Port, so a fault of the bus reaches the
// driver as the hardware reports it, and every ring entry is written body first, then its
// valid/phase byte as a separate 1-byte write (release).
//
// What it runs: every HWRM command of §3.5 the minimal driver sends (others answer
// CMD_NOT_SUPPORTED), the RCFW channel (§4: CMDQ, CREQ with phase, side buffers, the
// INITIALIZE_FW gate), NQs with arm state and MSI-X, the memory-region table (§6: keys,
// page lists of levels 0/1/2, access rights), RC queue pairs with the MODIFY_QP state
// machine, SEND, SEND with immediate, RDMA WRITE (with immediate) and RDMA READ over a
// cable (cable.hpp), with PSNs, coalesced acknowledgements, go-back on sequence NAKs,
// implied NAKs and timeouts, duplicate detection, receiver-not-ready retries, error CQEs, flush CQEs and QP error notifications. Doorbells are
// checked as the HSI says (index in range, epoch = wrap parity, §5.8.2); one that fails
// is dropped and counted. Where the model and the hardware differ, the source says so
// at the spot.
//
// Its port (cable.hpp) is a RoCE Ethernet port: it sends each QP's packets as its network
// type says (MODIFY_QP): RoCEv2 over IPv4 or IPv6 (UDP port 4791, IBA annex A17) or
// RoCEv1 (EtherType 0x8915, annex A16), each with its ICRC; it checks every frame that
// arrives (RxCounters) and answers ARP requests for its IPv4 addresses and IPv6 neighbour
// solicitations for its IPv6 ones. Its addresses are the GIDs the driver adds (ADD_GID)
// and ModelOptions::address. It learns no peer's MAC: the driver gives it (MODIFY_QP
// dest_mac), as a RoCE driver does once the host has resolved it (resolve).
//
// How it runs: on its own thread (start) or stepped by hand (step, settle) for exact
// interleavings; both may be mixed. Its timers compare against ModelOptions::clock. BAR
// accesses and Port calls may come from any thread; the model's state changes only while
// one thread runs a step.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "rig/bnxt/sim/clock.hpp"
#include "rig/result.hpp"
#include "rig/sim/device.hpp"

namespace rig::bnxt::sim {

namespace testing {
class Faults;
}
class Cable;

// The limits QUERY_FUNC reports (§4.6.2) and the model enforces.
struct ModelLimits {
    std::uint64_t max_mr_size = std::uint64_t{1} << 39;
    std::uint32_t max_qp = 1024;     // excludes QP1
    std::uint16_t max_qp_wr = 4096;  // WQEs per SQ/RQ
    std::uint32_t max_cq = 1024;
    std::uint32_t max_cqe = 65536;          // CQEs per CQ
    std::uint8_t max_sge = 6;               // static WQE mode: at most 6
    std::uint8_t max_qp_rd_atom = 16;       // responder depth
    std::uint8_t max_qp_init_rd_atom = 16;  // initiator depth
    std::uint32_t max_mr = 65536;
    std::uint32_t max_inline_data = 96;
    std::uint32_t max_gid = 256;
    std::uint16_t max_rings = 64;  // NQ-type rings (CREQ and NQs), FUNC_QCAPS max_cmpl_rings
    std::uint16_t max_stat_ctx = 64;
};

// What HWRM_FUNC_BACKING_STORE_QCAPS reports (§3.11): the context memory the firmware
// asks the host for, and the most of each kind it takes. BACKING_STORE_CFG is checked
// against these; the RoCE objects of a kind then fit in what CFG gave it.
struct BackingStoreCaps {
    std::uint32_t qp_max_entries = 1024 + 64 + 1;  // ModelLimits::max_qp, the L2 QPs and QP1
    std::uint16_t qp_min_qp1_entries = 1;
    std::uint16_t qp_max_l2_entries = 64;
    std::uint16_t qp_entry_size = 832;
    std::uint16_t cq_max_l2_entries = 64;
    std::uint32_t cq_max_entries = 1024 + 64;
    std::uint16_t cq_entry_size = 64;
    std::uint32_t stat_max_entries = 64;
    std::uint16_t stat_entry_size = 160;
    std::uint16_t tqm_entry_size = 16;
    std::uint32_t tqm_min_entries_per_ring = 64;
    std::uint32_t tqm_max_entries_per_ring = 1u << 16;
    std::uint8_t tqm_entries_multiple = 1;
    std::uint8_t tqm_fp_rings_count = 0;         // 0: as many as QUEUE_QPORTCFG's queues (Linux's rule)
    std::uint32_t mrav_max_entries = 65536 * 2;  // MRs and AHs
    std::uint16_t mrav_entry_size = 128;
    std::uint16_t mrav_num_entries_units = 1;  // non-zero: CFG splits MRs from AHs
    std::uint16_t tim_entry_size = 16;
    std::uint32_t tim_max_entries = 1024 + 64 + 1;
};

struct ModelOptions {
    std::array<std::uint8_t, 6> mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};  // FUNC_QCAPS/QCFG mac_address
    // An IP address of the port besides its GIDs', as the L2 network interface sharing
    // the port holds one: "192.0.2.1", "fe80::1" (numeric). The port answers ARP (IPv4) or
    // neighbour solicitations (IPv6) for it, and resolve asks from it where no GID of the
    // family is there. Empty (the default): the port has the addresses of its GIDs only.
    // Model's constructor throws std::invalid_argument where it is not an address.
    std::string address;
    unsigned msix_vectors = 16;
    ModelLimits limits{};
    BackingStoreCaps backing_store{};
    std::uint16_t port_mtu = 9000;  // FUNC_QCFG admin_mtu
    std::uint8_t cos_queues = 8;    // QUEUE_QPORTCFG max_configurable_queues
    // VER_GET dev_caps_cfg SHORT_CMD_SUPPORTED and max_ext_req_len: the longest request
    // the firmware fetches in short mode (§3.1); a longer one is refused, as is any short
    // request where short mode is not supported. [UNCERTAIN] the value real P5 firmware
    // reports; 1024 holds every request of HSI 1.10.3.
    bool short_commands = true;
    std::uint16_t max_ext_req_len = 1024;
    // QUERY_FUNC dev_cap_flags HW_REQUESTER_RETX_ENABLED (§4.6.2): INITIALIZE_FW must then
    // carry HW_REQUESTER_RETX_SUPPORTED, and must not otherwise.
    bool hw_retransmission = false;
    // Time for the model's timers; must outlive the Nic. nullptr: a SteadyClock of its own.
    const ModelClock* clock = nullptr;
    // RC flow control: packets a QP sends beyond the last acknowledged one.
    std::uint32_t window_packets = 256;
    // The requester asks for an acknowledgement at least every this many packets, and the
    // responder sends one at least as often, asked or not.
    std::uint32_t ack_every = 16;
};

// What the port did with the frames that reached it, from power-on; each frame counts in
// exactly one field. Drops never reach a QP or a region.
struct RxCounters {
    std::uint64_t delivered = 0;               // RoCE packets handed to a QP
    std::uint64_t arp_requests = 0;            // ARP requests for one of the port's IPv4 addresses: answered
    std::uint64_t neighbor_solicitations = 0;  // for one of its IPv6 addresses: answered (RFC 4861 §7.2.4)
    std::uint64_t neighbor_answers = 0;        // ARP replies and advertisements a resolve asked for
    // Dropped:
    std::uint64_t not_roce = 0;         // another EtherType or IP protocol, an IP fragment, IPv4 options,
                                        // BTH TVer != 0; ARP and ICMPv6 not for the port or not asked for
    std::uint64_t truncated = 0;        // shorter than its headers, or than its IP, UDP or GRH length
    std::uint64_t bad_length = 0;       // longer than those lengths, lengths that disagree, PadCnt
                                        // beyond the payload
    std::uint64_t bad_ip_checksum = 0;  // IPv4 header checksum, IPv6's UDP checksum (zero included,
                                        // RFC 8200 §8.1); ICMPv6 checksum for ND
    std::uint64_t bad_udp_port = 0;     // UDP to another destination port than 4791
    std::uint64_t bad_opcode = 0;       // an opcode the model does not take (it takes RC's)
    std::uint64_t bad_aeth = 0;         // an AETH syndrome of a reserved kind (IBA Table 44)
    std::uint64_t bad_icrc = 0;
    std::uint64_t wrong_mac = 0;       // destination MAC not the port's (ND and ARP: nor its multicast
                                       // or broadcast)
    std::uint64_t wrong_address = 0;   // destination IP address (RoCEv1: GID) not the port's GIDs'
    std::uint64_t unknown_qp = 0;      // no QP of the destination QP number
    std::uint64_t unconnected_qp = 0;  // its QP in RESET, INIT or ERR
    std::uint64_t wrong_source = 0;    // source address (GID) not the one the QP is connected to
    std::uint64_t wrong_pkey = 0;      // P_Key not the QP's
};

class Model final : public rig::sim::Device {
public:
    explicit Model(ModelOptions options = {});
    ~Model() override;  // stops the worker; unplugs its cable
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    // rig::sim::Device (device.hpp). identity: vendor 0x14E4, device 0x1750, class
    // 0x020000, BAR0 64 KiB, BAR2 128 KiB, BAR4 16 KiB (all 64-bit), MSI-X vectors.
    rig::sim::Identity identity() const override;
    void attach(rig::sim::Port& port) override;
    void detach() override;
    std::uint64_t read(unsigned bar, std::uint64_t offset, unsigned width) override;
    void write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) override;
    std::span<std::byte> memory(unsigned bar) override;
    void reset() override;

    // Starts the model's own thread, which steps whenever there is work; out of work, it
    // spins for the next event up to 50 us (yielding its core to other threads between
    // looks), then sleeps on a condition variable (waking at the next timer deadline,
    // polled at 1 ms while one is pending). Idempotent. Throws std::logic_error before
    // attach.
    void start();
    // Stops and joins the thread (idempotent). Work left pending stays for step or start.
    void stop();
    bool running() const;

    // One unit of work on the caller's thread: the oldest BAR event (HWRM trigger, CMDQ
    // trigger, doorbell) or wire frame, else one due timer. false when there was none.
    // May run while the thread runs: steps are serialized.
    bool step();
    // Steps until step returns false or `max_steps` ran; returns the steps taken.
    std::size_t settle(std::size_t max_steps = 1'000'000);

    const ModelOptions& options() const;

    // The counts of what the port received (RxCounters). Thread-safe; waits for the step
    // that runs, if one does.
    RxCounters rx_counters() const;

    // The MAC of `gid` on the port's link, asked as the host's network interface sharing
    // the port asks it for a RoCE driver before it connects a QP: an ARP request (RFC 826)
    // for an IPv4-mapped GID, else a neighbour solicitation (RFC 4861 §7.2.2) to the
    // target's solicited-node multicast address, sent on the port's cable three times
    // within `timeout` (on ModelOptions::clock, as the model's timers: a ManualClock must be
    // moved for the timeout to pass) until the answer arrives. The port's own address gives its own MAC
    // at once. Error naming the address where no answer came within `timeout`, or where
    // the port is on no cable. The model must run (start) or be stepped by another thread
    // meanwhile. Thread-safe; several lookups may wait at once. Throws
    // std::invalid_argument for a timeout below 1 ms.
    rig::Result<std::array<std::uint8_t, 6>> resolve(std::span<const std::uint8_t, 16> gid,
                                                     std::chrono::milliseconds timeout);

    struct Impl;

private:
    friend class Cable;
    friend class testing::Faults;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rig::bnxt::sim
