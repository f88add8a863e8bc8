// nic/bnxt/src/rcfw.hpp: the RoCE firmware channel (docs/hsi.md §4): commands into
// CMDQ slots, published through the BAR0 producer register and trigger, answered on the
// CREQ. One command at a time: the driver waits for the CREQ completion whose cookie is
// the command's (§4.3 step 6) against a deadline from the clock, consuming every CREQ
// entry on the way: QP error notifications (§4.5.4) go to `qp_error`, entries of other
// cookies (a command that timed out earlier) and function events are dropped.
//
// Who owns what: the driver owns the CMDQ producer and the CREQ consumer; the firmware
// the CMDQ consumer and the CREQ producer.
//
// Not thread safe: the Nic's channel lock serializes its calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "dma_buffer.hpp"
#include "rig/bnxt/clock.hpp"
#include "rig/bnxt/detail/ring.hpp"
#include "rig/bnxt/hsi/rcfw.hpp"
#include "rig/pci/window.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

class Rcfw {
public:
    // `cmdq`: depth × 16 bytes, one contiguous buffer (level 0); `creq`: creq_entries × 16
    // bytes registered as ring `creq_ring_id`; `side`: one page for side buffers.
    Rcfw(std::string bus, pci::Window bar0, pci::Window doorbells, DmaBuffer cmdq, std::uint32_t depth,
         QueueMemory creq, std::uint32_t creq_entries, std::uint16_t creq_ring_id, DmaBuffer side,
         std::shared_ptr<Clock> clock, std::chrono::milliseconds timeout);

    // §4.2 step 3: cmdq_init into the BAR0 mailbox, four 32-bit stores.
    void start();

    // Sends `command` (its cmdq_base header is filled here but for `flags` and `qp_type`)
    // and waits for its completion; with a non-empty `side_buffer`, the firmware's side
    // buffer is copied into it. Error where the firmware refuses it ("the firmware
    // refused CREATE_QP (status 5: INVALID_PARAMETER)") or it times out.
    template <class Command>
    Result<hsi::CreqCompletion> call(hsi::Opcode opcode, Command command, std::span<std::byte> side_buffer = {}) {
        return transact(opcode, std::as_writable_bytes(std::span(&command, 1)), side_buffer);
    }
    // A command that is the 16-byte header alone (QUERY_FUNC, QUERY_VERSION, DEINITIALIZE_FW).
    Result<hsi::CreqCompletion> call_header(hsi::Opcode opcode, std::span<std::byte> side_buffer = {});

    // Called with the QP number of every QP error notification seen.
    std::function<void(std::uint32_t qpn)> qp_error;

    std::chrono::milliseconds timeout() const { return timeout_; }

private:
    Result<hsi::CreqCompletion> transact(hsi::Opcode opcode, std::span<std::byte> command,
                                         std::span<std::byte> side_buffer);
    // Takes every new CREQ entry; the completion of `cookie` where one came.
    std::optional<hsi::CreqCompletion> drain(std::uint16_t cookie);

    std::string bus_;
    pci::Window bar0_;
    pci::Window doorbells_;
    DmaBuffer cmdq_;
    std::uint32_t depth_;
    QueueMemory creq_;
    detail::RingPosition creq_cons_;
    std::uint16_t creq_ring_id_;
    DmaBuffer side_;
    std::shared_ptr<Clock> clock_;
    std::chrono::milliseconds timeout_;
    std::uint16_t prod_ = 0;  // slots ever written, modulo 2^16 (§4.3 step 4)
    bool first_ = true;       // the first producer write after start carries bit 31
    std::uint16_t seq_ = 0;
};

}  // namespace rig::bnxt
