// rig/bnxt/nic.hpp: a Broadcom NetXtreme-E P5 (BCM57508 family) RoCE function driven from
// user space (docs/hsi.md; docs/design.md, "NIC driver"). The driver reaches the NIC only
// through rig::pci::Function and rig::pci::Window, so it drives a NIC of this machine
// (VFIO), of a simulated machine or of a machine behind any other transport alike.
//
// Lifecycle: Nic::open → Region, Cq, Qp (region.hpp, cq.hpp, qp.hpp) → close. open takes
// the function, resets it (a Function Level Reset), turns PCI Express Relaxed Ordering
// off (the promise of docs/api.md ("Region") that a region is written in the order of its entries
// rests on it: docs/bugs.md B27), enables memory decoding and bus mastering, and brings
// the NIC up in the order of §7.1 over the HWRM channel (§3) and the RoCE firmware
// channel (§4): versions, reset, capabilities, driver registration, configuration,
// context memory, the CREQ, a statistics context, the CMDQ, QUERY_FUNC limits,
// INITIALIZE_FW, the notification queue, a GID. close() tears down in the reverse order
// of §7.4, destroying what the caller left (queue pairs, regions, completion queues) and
// giving back every window, DMA allocation and pin; a failed open gives back the same.
//
// Errors name the NIC's bus address, the command and the firmware's status in words:
//   "0000:41:00.0: the firmware refused REGISTER_MR (status 2: RESOURCES)"
//   "0000:41:00.0: HWRM_FUNC_QCAPS timed out after 500 ms"
// A command the firmware never answers times out (Options::command_timeout) instead of
// hanging (B25); a response with another sequence number is ignored as stale and one
// with an impossible length is rejected.
//
// Thread safety: open, close and every control call of Region, Cq and Qp (create,
// register, connect, destroy) may be called from several threads: the firmware channels
// take one command at a time. The data path (Qp posts, Cq::poll, Cq::wait) takes no
// lock: see qp.hpp and cq.hpp for which calls may run together. close() must not run
// while another thread uses the Nic or anything made from it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/bnxt/clock.hpp"
#include "rig/bnxt/gid.hpp"
#include "rig/pci/function.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

// How Cq::wait learns of a completion. The NQ is allocated in MSI-X mode only where Cq::wait
// sleeps on its vector, else in poll mode (RING_ALLOC int_mode POLL, §3.12); the CREQ is
// always polled. Linux's bnxt_re needs MSI-X; docs/linux.md lists this and the driver's
// other differences from Linux, with the reasons.
enum class Interrupts {
    Auto,  // the notification queue's MSI-X vector where the function has MSI-X, else polling
    Poll,  // always polling the completion queue
};

struct Options {
    // The clock every wait is measured by; steady_clock() where null.
    std::shared_ptr<Clock> clock;
    // The bound of every firmware command. Unset: the firmware's HWRM_VER_GET
    // def_req_timeout (500 ms until it answers; §3.1), 4x that for HWRM_FUNC_RESET, at
    // most 40 s.
    std::optional<std::chrono::milliseconds> command_timeout;
    // The port's IP address, "10.0.0.1" or "2001:db8::1" (numeric): the GID table is
    // {the link-local GID of the MAC, this address} (address_gids, gid.hpp), both RoCEv2,
    // and queue pairs speak from this address. Empty, and no `gids`: default_gids(MAC),
    // whose address is ::ffff:192.0.2.x, of the block RFC 5737 reserves for documentation
    // (so that a port that was told nothing uses nobody's address). open's Error names a
    // text that is no address.
    std::string address;
    // The port's whole GID table instead (address empty: std::invalid_argument if both are
    // given), from which choose_gid (gid.hpp) picks the GID of every queue pair.
    std::vector<GidEntry> gids;
    LinkLocal link_local = LinkLocal::Refuse;
    Interrupts interrupts = Interrupts::Auto;
    // Context memory the driver gives a NIC that asks for it (§3.11): at most this many
    // queue pairs, completion queues and memory regions, within the firmware's maxima.
    std::uint32_t max_qps = 256;
    std::uint32_t max_cqs = 256;
    std::uint32_t max_mrs = 4096;
    // The most context memory the driver gives, all tables together: a firmware whose
    // BACKING_STORE_QCAPS minimums need more is refused at open with the figures.
    std::uint64_t max_context_bytes = std::uint64_t{256} << 20;
};

// The NIC's limits as the firmware's QUERY_FUNC gives them (§4.6.2), as the driver
// applies them: a work request beyond one is refused before it reaches a queue.
struct Limits {
    std::uint64_t max_mr_size = 0;         // bytes of one region
    std::uint32_t max_qp = 0;              // queue pairs
    std::uint32_t max_qp_wr = 0;           // work requests outstanding on one queue
    std::uint32_t max_cq = 0;              // completion queues
    std::uint32_t max_cqe = 0;             // completions one Cq holds
    std::uint32_t max_sge = 0;             // scatter/gather elements per request (static WQEs: <= 6)
    std::uint32_t max_inline_data = 0;     // bytes of an inline send (static WQEs: <= 96)
    std::uint32_t max_mr = 0;              // regions
    std::uint32_t max_gid = 0;             // GID table entries
    std::uint8_t max_qp_rd_atom = 0;       // RDMA READs a queue pair answers at once
    std::uint8_t max_qp_init_rd_atom = 0;  // RDMA READs a queue pair has outstanding
};

// The path MTU of a RoCE queue pair (§4.6.9).
enum class Mtu : std::uint8_t { Mtu256, Mtu512, Mtu1024, Mtu2048, Mtu4096 };
constexpr std::uint32_t bytes(Mtu mtu) { return std::uint32_t{256} << static_cast<unsigned>(mtu); }

struct Handles;  // the driver's (nic/bnxt/src/state.hpp): no user names it

class Nic {
public:
    // Opens the NIC at `bus` of `machine` (docs/api.md, Function::take). Error naming the bus
    // where the function cannot be taken, is no Broadcom network function (then nothing is
    // reset or written), does not answer, is not a P5 RoCE function
    // ("chip 0x1760 is not a P5"), offers no RoCE, has no routable RoCEv2 GID (B19), is
    // given an Options::address that is no address, where a firmware command is refused
    // or not answered, or where the machine hands out DMA memory not mapped into this
    // process (a machine reached through a transport: the driver builds WQEs and reads
    // CQEs in place); everything taken so far is given back first. Throws
    // std::invalid_argument where `bus` is not a bus address or both Options::address and
    // Options::gids are given.
    static Result<Nic> open(const pci::Machine& machine, std::string_view bus, Options options = {});

    Nic(Nic&&) noexcept;
    Nic& operator=(Nic&&) noexcept;
    Nic(const Nic&) = delete;
    Nic& operator=(const Nic&) = delete;
    // Closes the NIC if close() did not (its errors are lost).
    ~Nic();

    // Tears down in the order of §7.4: destroys the caller's queue pairs, deregisters its
    // regions, destroys its completion queues, then the driver's own state, turns bus
    // mastering off and gives the function back. Every step is attempted; the first
    // refusal or timeout is the Error. Regions, Cqs and Qps of the NIC are dead after it:
    // their posts throw std::invalid_argument, their destroy and deregister do nothing.
    // A second close does nothing and returns Ok.
    Result<void> close();
    bool closed() const;

    const std::string& bus() const;
    // The function the NIC is, for its counts of windows, DMA memory and pins.
    const pci::Function& function() const;
    const Limits& limits() const;
    Mac mac() const;
    Gid gid() const;  // the GID chosen at open (gid.hpp)
    // ADD_GID's firmware index of it. open adds every address of the table once, in table
    // order (a RoCEv1 and a RoCEv2 entry of one address share an entry, as Linux's bnxt_re
    // shares them), so the default table and address_gids give index 0 to the link-local
    // GID and 1 to the address, where Linux's rxe has them too.
    std::uint16_t gid_index() const;
    // The port's GID table: Options::gids, address_gids(mac(), Options::address) or
    // default_gids(mac()). Path::gid_index (qp.hpp) indexes it; gids()[gid_table_index()]
    // is gid().
    const std::vector<GidEntry>& gids() const;
    std::size_t gid_table_index() const;
    Mtu mtu() const;  // the largest path MTU the port's MTU carries
    // The firmware versions, "HWRM 1.10.3, RoCE 1.8.6", as HWRM_VER_GET and QUERY_VERSION give them.
    const std::string& firmware() const;
    // Whether Cq::wait sleeps on the notification queue's MSI-X vector.
    bool interrupts() const;

    struct State;  // the driver's, behind the handle

private:
    friend struct Handles;  // the driver's way to the state (nic/bnxt/src/state.hpp)
    explicit Nic(std::shared_ptr<State> state);
    std::shared_ptr<State> state_;
};

}  // namespace rig::bnxt
