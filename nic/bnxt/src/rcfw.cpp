// The RoCE firmware channel (rcfw.hpp; docs/hsi.md §4.2-§4.5).
#include "rcfw.hpp"

#include <algorithm>
#include <array>

#include "doorbell.hpp"
#include "rig/bnxt/hsi/regs.hpp"
#include "rig/text.hpp"
#include "rig/little_endian.hpp"

namespace rig::bnxt {
namespace {

std::string opcode_name(hsi::Opcode opcode) {
    const auto name = hsi::name(opcode);
    return name.empty() ? "RoCE command " + text::hex(static_cast<std::uint8_t>(opcode), 2) : std::string(name);
}

}  // namespace

Rcfw::Rcfw(std::string bus, pci::Window bar0, pci::Window doorbells, DmaBuffer cmdq, std::uint32_t depth,
           QueueMemory creq, std::uint32_t creq_entries, std::uint16_t creq_ring_id, DmaBuffer side,
           std::shared_ptr<Clock> clock, std::chrono::milliseconds timeout)
    : bus_(std::move(bus)),
      bar0_(std::move(bar0)),
      doorbells_(std::move(doorbells)),
      cmdq_(std::move(cmdq)),
      depth_(depth),
      creq_(std::move(creq)),
      creq_cons_(creq_entries),
      creq_ring_id_(creq_ring_id),
      side_(std::move(side)),
      clock_(std::move(clock)),
      timeout_(timeout) {}

void Rcfw::start() {
    hsi::CmdqInit init{};
    init.cmdq_pbl = cmdq_.bus();
    init.cmdq_size_cmdq_lvl = static_cast<std::uint16_t>(
        hsi::cmdq_init::cmdq_lvl(static_cast<std::uint8_t>(hsi::PblLevel::LVL_0)) | hsi::cmdq_init::cmdq_size(depth_));
    init.creq_ring_id = creq_ring_id_;
    init.prod_idx = 0;
    const auto bytes = little_endian::bytes_of(init);
    for (std::size_t offset = 0; offset < sizeof init; offset += 4)
        bar0_.write32(hsi::bar0::cmdq_mailbox + offset,
                      little_endian::load<little_endian::Le32>(bytes.subspan(offset, 4)).get());
}

Result<hsi::CreqCompletion> Rcfw::call_header(hsi::Opcode opcode, std::span<std::byte> side_buffer) {
    hsi::CmdqBase header{};
    return transact(opcode, std::as_writable_bytes(std::span(&header, 1)), side_buffer);
}

std::optional<hsi::CreqCompletion> Rcfw::drain(std::uint16_t cookie) {
    std::optional<hsi::CreqCompletion> found;
    const pci::Window& ring = creq_.memory.window();
    bool consumed = false;
    for (;;) {
        const std::uint64_t offset = std::uint64_t{creq_cons_.index()} * hsi::creq::entry_bytes;
        // §4.5.1: the entry is new iff its v bit is the phase; read the rest only after.
        const std::uint8_t v = ring.read8(offset + hsi::creq::v_offset, std::memory_order_acquire);
        if (hsi::creq::v.of(v) != creq_cons_.phase()) break;
        std::array<std::byte, hsi::creq::entry_bytes> bytes;
        ring.read(offset, bytes);
        creq_cons_.advance();
        consumed = true;
        const auto entry = little_endian::load<hsi::CreqCompletion>(bytes);
        if (hsi::creq::type.of(entry.type) != static_cast<std::uint8_t>(hsi::CreqType::QP_EVENT)) continue;
        if (entry.event == hsi::creq_event::QP_ERROR_NOTIFICATION) {
            if (qp_error) qp_error(little_endian::load<hsi::CreqQpErrorNotification>(bytes).xid.get());
            continue;
        }
        if (entry.cookie == cookie) found = entry;
    }
    // §4.5.1: after a batch, an NQ doorbell (no arm) with the new consumer index.
    if (consumed) ring_doorbell(doorbells_, creq_cons_.doorbell(hsi::DbType::NQ, creq_ring_id_));
    return found;
}

Result<hsi::CreqCompletion> Rcfw::transact(hsi::Opcode opcode, std::span<std::byte> command,
                                           std::span<std::byte> side_buffer) {
    // §4.3 step 1-2, §4.4: the header.
    const auto cookie = static_cast<std::uint16_t>((++seq_ & 0x7FFF) | hsi::cookie::BLOCKING(1));
    auto header = little_endian::load<hsi::CmdqBase>(command);
    header.opcode = static_cast<std::uint8_t>(opcode);
    header.cmd_size = static_cast<std::uint8_t>((command.size() + hsi::slot_bytes - 1) / hsi::slot_bytes);
    header.cookie = cookie;
    header.resp_size = 0;
    header.resp_addr = 0;
    if (!side_buffer.empty()) {
        side_.fill(std::byte{0});
        header.resp_size = static_cast<std::uint8_t>((side_buffer.size() + hsi::slot_bytes - 1) / hsi::slot_bytes);
        header.resp_addr = side_.bus();
    }
    little_endian::store(command, header);

    // §4.3 step 3: consecutive slots from prod % depth, the last zero-padded.
    const pci::Window& slots = cmdq_.window();
    for (std::size_t k = 0; k < header.cmd_size; ++k) {
        std::array<std::byte, hsi::slot_bytes> slot{};
        const std::size_t from = k * hsi::slot_bytes;
        std::copy_n(command.begin() + static_cast<std::ptrdiff_t>(from),
                    std::min<std::size_t>(hsi::slot_bytes, command.size() - from), slot.begin());
        slots.write(std::uint64_t{static_cast<std::uint16_t>(prod_ + k) % depth_} * hsi::slot_bytes, slot);
    }
    prod_ = static_cast<std::uint16_t>(prod_ + header.cmd_size);

    // §4.3 step 5: the producer (bit 31 on the first write after start), then the trigger.
    to_device_barrier();
    auto producer = static_cast<std::uint32_t>(hsi::cmdq_prod::prod_idx(prod_));
    if (first_) producer |= static_cast<std::uint32_t>(hsi::cmdq_prod::RESET(1));
    first_ = false;
    bar0_.write32(hsi::bar0::cmdq_prod, producer);
    bar0_.write32(hsi::bar0::cmdq_trigger, hsi::cmdq_prod::trigger_value);

    // §4.3 step 6.
    const auto deadline = clock_->now() + timeout_;
    for (;;) {
        if (auto done = drain(cookie)) {
            if (done->event != static_cast<std::uint8_t>(opcode))
                return fail(bus_, ": ", opcode_name(opcode), " was answered with a completion of ",
                            opcode_name(static_cast<hsi::Opcode>(done->event)));
            if (done->status != 0) {
                const auto name = hsi::name(static_cast<hsi::RcfwStatus>(done->status));
                return fail(bus_, ": the firmware refused ", opcode_name(opcode), " (status ",
                            std::to_string(done->status), ": ", name.empty() ? std::string_view("unknown") : name, ")");
            }
            if (!side_buffer.empty())
                side_.window().read(0, side_buffer.first(std::min<std::size_t>(side_buffer.size(), side_.bytes())));
            return *done;
        }
        if (clock_->now() >= deadline)
            return fail(bus_, ": ", opcode_name(opcode), " timed out after ", text::duration(timeout_));
        clock_->pause();
    }
}

}  // namespace rig::bnxt
