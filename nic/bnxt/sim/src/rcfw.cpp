// The RoCE firmware channel of the model (docs/hsi.md §4): the CMDQ latched from the
// BAR0 mailbox, read by DMA on each trigger and run in order; a completion for each
// command on the CREQ (phase bit, body first, `v` byte last); side buffers for queries;
// the INITIALIZE_FW gate; QUERY_VERSION, QUERY_FUNC, INITIALIZE_FW and DEINITIALIZE_FW.
// Commands on CQs, QPs, MRs and GIDs live in objects.cpp and qp.cpp.
//
// A full CREQ stalls the channel: commands wait in the CMDQ until a CREQ doorbell frees
// an entry (§4.5.1: the driver must keep updating the consumer index even when polling).
//
// What the firmware refuses here: a producer write that does not carry the RESET bit
// before one that did since the channel was latched (§4.3 step 5: the firmware's pointers
// are not reset; the trigger is counted as a bad descriptor and nothing runs); a command
// shorter than its oldest layout or longer than its newest (§4.6.0; INVALID_PARAMETER);
// INITIALIZE_FW that names context tables or VF shares (P5 takes them from the backing
// store and the model has no VFs), a flag the function did not report (HW requester
// retransmission where QUERY_FUNC gives it, and only there: Linux's
// bnxt_qplib_init_rcfw sets HW_REQUESTER_RETX_SUPPORTED exactly where BNXT_RE_HW_RETX
// holds), or a stats context not allocated (INVALID_PARAMETER).
#include <algorithm>

#include "firmware.hpp"
#include "rig/bnxt/hsi/pbl.hpp"
#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::sim::detail {

using hsi::Opcode;
using hsi::RcfwStatus;

namespace {
constexpr std::array<std::uint8_t, 3> roce_interface{1, 8, 6};  // §4.6.1: major, minor, build
}  // namespace

void Firmware::cmdq_init(std::span<const std::byte> mailbox) {
    // §4.2 model: latch pbl, level, depth and creq_ring_id; consumer 0.
    const auto m = load<hsi::CmdqInit>(mailbox);
    const unsigned level = static_cast<unsigned>(hsi::cmdq_init::cmdq_lvl.of(m.cmdq_size_cmdq_lvl));
    const auto depth = static_cast<std::uint32_t>(hsi::cmdq_init::cmdq_size.of(m.cmdq_size_cmdq_lvl));
    channel_.latched = false;
    if (level > 2 || depth == 0 || (depth & (depth - 1)) != 0 || !rings_.contains(m.creq_ring_id)) {
        // Nothing to answer on: the channel stays down and every command waits forever.
        ++counters_.bad_descriptors;
        return;
    }
    channel_.cmdq = PageList(level, 12, m.cmdq_pbl);
    channel_.depth = depth;
    channel_.creq = m.creq_ring_id;
    channel_.consumer = 0;
    channel_.producer = static_cast<std::uint16_t>(m.prod_idx);
    channel_.reset = false;
    channel_.latched = true;
}

void Firmware::cmdq_trigger(std::uint32_t producer) {
    if (!channel_.latched) {
        ++counters_.bad_descriptors;
        return;
    }
    // §4.3 model: bit 31 resets the consumer, then the producer is the low 16 bits; the
    // first write after the channel was latched must carry it.
    if (hsi::cmdq_prod::RESET.of(producer)) {
        channel_.consumer = 0;
        channel_.reset = true;
    } else if (!channel_.reset) {
        ++counters_.bad_descriptors;
        return;
    }
    channel_.producer = static_cast<std::uint16_t>(hsi::cmdq_prod::prod_idx.of(producer));
    cmdq_run();
}

void Firmware::cmdq_run() {
    if (!channel_.latched) return;
    NqRing* creq = find_ring(channel_.creq);
    if (!creq) return;
    while (channel_.consumer != channel_.producer) {
        if (ahead(creq->consumer, creq->producer, creq->length) >= creq->length) return;  // stalled
        const std::uint16_t available = static_cast<std::uint16_t>(channel_.producer - channel_.consumer);
        std::array<std::byte, hsi::slot_bytes> slot{};
        const std::uint64_t slot_offset = (channel_.consumer % channel_.depth) * std::uint64_t{hsi::slot_bytes};
        if (!read_list(bus_, channel_.cmdq, slot_offset, slot)) return;  // counted; retried on the next trigger
        const auto head = load<hsi::CmdqBase>(slot);
        if (head.cmd_size == 0 || head.cmd_size > available) {
            // A malformed command: the firmware cannot find the next one, it skips to the producer.
            ++counters_.bad_descriptors;
            channel_.consumer = channel_.producer;
            return;
        }
        Bytes command(std::size_t{head.cmd_size} * hsi::slot_bytes);
        for (std::size_t i = 0; i < head.cmd_size; ++i) {
            const std::uint64_t off = ((channel_.consumer + i) % channel_.depth) * std::uint64_t{hsi::slot_bytes};
            if (!read_list(bus_, channel_.cmdq, off, std::span(command).subspan(i * hsi::slot_bytes, hsi::slot_bytes)))
                return;
        }
        channel_.consumer = static_cast<std::uint16_t>(channel_.consumer + head.cmd_size);
        ++counters_.rcfw_commands;

        const auto fault = faults_.take_rcfw(head.opcode);
        if (fault && fault->kind == FaultKind::drop) continue;
        Answer answer = fault && fault->kind == FaultKind::refuse ? Answer::fail(static_cast<RcfwStatus>(fault->code))
                                                                  : rcfw_execute(command);
        if (answer.status == RcfwStatus::SUCCESS && !answer.side_buffer.empty() && head.resp_addr != 0) {
            // §4.5.3: at most resp_size x 16 bytes, then the CREQ entry.
            const std::size_t room = std::size_t{head.resp_size} * 16;
            const std::size_t n = std::min(room, answer.side_buffer.size());
            hsi::SbHeader sb{};
            sb.opcode = head.opcode;
            sb.status = 0;
            sb.cookie = head.cookie;
            sb.resp_size = static_cast<std::uint8_t>((n + 15) / 16);
            rig::little_endian::store(std::span(answer.side_buffer), sb);
            faults_.tamper(testing::Written::side_buffer, std::span(answer.side_buffer).first(n));
            bus_.write(head.resp_addr, std::span(answer.side_buffer).first(n));
            if (answer.xid == 0) answer.xid = static_cast<std::uint32_t>(sb.resp_size);
        }
        hsi::CreqCompletion c{};
        c.type = static_cast<std::uint8_t>(hsi::CreqType::QP_EVENT);
        c.status = static_cast<std::uint8_t>(answer.status);
        c.cookie = static_cast<std::uint16_t>(head.cookie - (fault && fault->kind == FaultKind::stale ? 1 : 0));
        c.xid = answer.xid;
        c.event = head.opcode;
        std::array<std::byte, 16> entry{};
        rig::little_endian::store(std::span(entry), c);
        std::copy(answer.extra.begin(), answer.extra.end(), entry.begin() + 10);
        creq_post(entry);
    }
}

bool Firmware::creq_post(std::span<const std::byte, 16> entry) {
    NqRing* creq = channel_.latched ? find_ring(channel_.creq) : nullptr;
    if (!creq) return false;
    return nq_post(*creq, entry, testing::Written::creq);
}

Firmware::Answer Firmware::rcfw_execute(std::span<const std::byte> command) {
    const auto head = load<hsi::CmdqBase>(command);
    const auto op = static_cast<Opcode>(head.opcode);
    const std::size_t min_bytes = hsi::min_command_bytes(op);
    if (min_bytes == 0) {
        // Opcodes of §4.6.0 outside the minimal subset are the firmware's, not the model's.
        return Answer::fail(hsi::name(op).empty() ? RcfwStatus::INVALID_CMD : RcfwStatus::NOT_IMPLEMENTED);
    }
    // §4.3: before INITIALIZE_FW only QUERY_FUNC, QUERY_VERSION and INITIALIZE_FW.
    if (!channel_.initialized && op != Opcode::QUERY_FUNC && op != Opcode::QUERY_VERSION && op != Opcode::INITIALIZE_FW)
        return Answer::fail(RcfwStatus::INVALID_CMD);
    // §0: any length from the oldest layout to the newest.
    if (command.size() < min_bytes || command.size() > hsi::max_command_bytes(op)) {
        ++counters_.bad_descriptors;
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    }
    struct Entry {
        Opcode op;
        Answer (Firmware::*handler)(std::span<const std::byte>);
    };
    static constexpr Entry table[] = {
        {Opcode::QUERY_VERSION, &Firmware::query_version},
        {Opcode::QUERY_FUNC, &Firmware::query_func},
        {Opcode::INITIALIZE_FW, &Firmware::initialize_fw},
        {Opcode::DEINITIALIZE_FW, &Firmware::deinitialize_fw},
        {Opcode::ADD_GID, &Firmware::add_gid},
        {Opcode::DELETE_GID, &Firmware::delete_gid},
        {Opcode::CREATE_CQ, &Firmware::create_cq},
        {Opcode::DESTROY_CQ, &Firmware::destroy_cq},
        {Opcode::CREATE_QP, &Firmware::create_qp},
        {Opcode::DESTROY_QP, &Firmware::destroy_qp},
        {Opcode::MODIFY_QP, &Firmware::modify_qp},
        {Opcode::QUERY_QP, &Firmware::query_qp},
        {Opcode::ALLOCATE_MRW, &Firmware::allocate_mrw},
        {Opcode::REGISTER_MR, &Firmware::register_mr},
        {Opcode::DEREGISTER_MR, &Firmware::deregister_mr},
        {Opcode::DEALLOCATE_KEY, &Firmware::deallocate_key},
    };
    for (const Entry& e : table)
        if (e.op == op) return (this->*e.handler)(command);
    return Answer::fail(RcfwStatus::NOT_IMPLEMENTED);
}

Firmware::Answer Firmware::query_version(std::span<const std::byte>) {
    // §4.6.1: versions inline in the completion: firmware 230, RoCE interface 1.8.6.
    hsi::CreqQueryVersionCompletion v{};
    v.fw_maj = firmware_major;
    v.intf_maj = roce_interface[0];
    v.intf_minor = roce_interface[1];
    v.intf_bld = roce_interface[2];
    const auto b = bytes_of(v);
    Answer a;
    a.xid = load<hsi::CreqCompletion>(b).xid;
    std::copy(b.begin() + 10, b.end(), a.extra.begin());
    return a;
}

Firmware::Answer Firmware::query_func(std::span<const std::byte> command) {
    const auto head = load<hsi::CmdqBase>(command);
    const auto& limits = options_.limits;
    if (head.resp_addr == 0 || head.resp_size == 0) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    hsi::QueryFuncSb sb{};
    sb.max_mr_size = limits.max_mr_size;
    sb.max_qp = limits.max_qp;
    sb.max_qp_wr = limits.max_qp_wr;
    // §4.6.2: no unified MR; HW requester retransmission where ModelOptions say.
    sb.dev_cap_flags =
        static_cast<std::uint16_t>(hsi::query_func::HW_REQUESTER_RETX_ENABLED(options_.hw_retransmission ? 1 : 0));
    sb.max_cq = limits.max_cq;
    sb.max_cqe = limits.max_cqe;
    sb.max_pd = max_pd;
    sb.max_sge = limits.max_sge;
    sb.max_srq_sge = 0;
    sb.max_qp_rd_atom = limits.max_qp_rd_atom;
    sb.max_qp_init_rd_atom = limits.max_qp_init_rd_atom;
    sb.max_mr = limits.max_mr;
    sb.max_pkeys = 1;
    sb.max_inline_data = limits.max_inline_data;
    sb.l2_db_space_size = static_cast<std::uint8_t>(hsi::bar2::doorbell_page_pf / 4096 - 1);
    sb.max_gid = limits.max_gid;
    sb.max_dpi = dpi_pages;
    sb.dev_cap_ext_flags = static_cast<std::uint8_t>(hsi::query_func::ATOMIC_OPS_NOT_SUPPORTED(1));
    Answer a;
    a.side_buffer = bytes_of(sb);
    return a;
}

Firmware::Answer Firmware::initialize_fw(std::span<const std::byte> command) {
    // §4.6.3: once; on P5 the context fields are 0; stat_ctx_id from STAT_CTX_ALLOC.
    if (channel_.initialized) return Answer::fail(RcfwStatus::FAIL);
    const auto c = load<hsi::InitializeFw>(command);
    namespace fw = hsi::initialize_fw;
    const std::uint16_t flags = load<hsi::CmdqBase>(command).flags;
    const std::uint16_t known = static_cast<std::uint16_t>(fw::HW_REQUESTER_RETX_SUPPORTED(1) | fw::DRV_VERSION(1));
    const bool retx = fw::HW_REQUESTER_RETX_SUPPORTED.of(flags) != 0;
    const bool tables = c.qpc_pg_size_qpc_lvl != 0 || c.mrw_pg_size_mrw_lvl != 0 || c.srq_pg_size_srq_lvl != 0 ||
                        c.cq_pg_size_cq_lvl != 0 || c.tqm_pg_size_tqm_lvl != 0 || c.tim_pg_size_tim_lvl != 0 ||
                        c.qpc_page_dir != 0 || c.mrw_page_dir != 0 || c.srq_page_dir != 0 || c.cq_page_dir != 0 ||
                        c.tqm_page_dir != 0 || c.tim_page_dir != 0 || c.number_of_qp != 0 || c.number_of_mrw != 0 ||
                        c.number_of_srq != 0 || c.number_of_cq != 0;
    const bool vf_shares = c.max_qp_per_vf != 0 || c.max_mrw_per_vf != 0 || c.max_srq_per_vf != 0 ||
                           c.max_cq_per_vf != 0 || c.max_gid_per_vf != 0;
    if ((flags & ~known) != 0 || retx != options_.hw_retransmission || tables || vf_shares ||
        (fw::DRV_VERSION.of(flags) != 0 && command.size() < initialize_fw_with_version_bytes))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    auto it = stat_ctxs_.find(c.stat_ctx_id);
    if (it == stat_ctxs_.end()) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    it->second = true;
    channel_.stat_ctx = c.stat_ctx_id;
    channel_.initialized = true;
    return {};
}

Firmware::Answer Firmware::deinitialize_fw(std::span<const std::byte>) {
    // §4.6.4: the model destroys what is left.
    destroy_roce_objects();
    gids_.assign(options_.limits.max_gid, std::nullopt);
    if (auto it = stat_ctxs_.find(channel_.stat_ctx); it != stat_ctxs_.end()) it->second = false;
    channel_.initialized = false;
    return {};
}

}  // namespace rig::bnxt::sim::detail
