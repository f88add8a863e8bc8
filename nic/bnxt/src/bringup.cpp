// Driver bring-up, one function per step of docs/hsi.md §7.1, in its order. Each
// step records what it set up in Nic::State, so that a failure at any step is undone by
// the teardown of §7.4 (teardown.cpp) and nothing is left behind.
#include "bringup.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "doorbell.hpp"
#include "rig/pci/config.hpp"
#include "rig/bnxt/hsi/cqe.hpp"
#include "rig/bnxt/hsi/regs.hpp"
#include "rig/bnxt/hsi/wqe.hpp"
#include "rig/text.hpp"
#include "rig/little_endian.hpp"

namespace rig::bnxt {
namespace {

constexpr std::uint32_t cmdq_depth = 256;     // slots: one 4 KiB page (§4.2 step 2)
constexpr std::uint32_t creq_entries = 1024;  // a power of two (§4.2 step 1)
constexpr std::uint32_t nq_entries = 1024;
constexpr std::uint64_t stats_bytes = 4096;
constexpr std::uint16_t stats_dma_length = 160;  // §3.13: Linux's basic layout
constexpr unsigned creq_vector = 0;              // the CREQ is polled, never armed
constexpr unsigned ver_get_attempts = 3;         // §7.1 step 3: retried while it times out or is not ready

// §1.1: the VF device IDs; their doorbell page is at BAR2 + 0x4000 (§1.4).
bool is_vf(std::uint16_t device) { return device >= 0x1806 && device <= 0x1809; }

// rig's version, as the driver registers it (§3.10).
constexpr std::uint8_t driver_major = 0, driver_minor = 1, driver_update = 0;

// RoCEv2 headers between the port MTU and the path MTU: Linux's iboe_get_mtu
// (include/rdma/ib_addr.h) subtracts IB_GRH_BYTES (40), IB_UDP_BYTES (8), IB_BTH_BYTES
// (12), IB_EXT_XRC_BYTES (4), IB_EXT_ATOMICETH_BYTES (28) and IB_ICRC_BYTES (4).
constexpr std::uint32_t roce_header_bytes = 96;

Mtu path_mtu(std::uint32_t port_mtu) {
    const std::uint32_t room = port_mtu > roce_header_bytes ? port_mtu - roce_header_bytes : 0;
    Mtu best = Mtu::Mtu256;
    for (Mtu m : {Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096})
        if (bytes(m) <= room) best = m;
    return best;
}

}  // namespace

// §7.1 step 1 (and a Function Level Reset before it, which returns Command, Device
// Control and MSI-X to their power-on values, so it comes first): memory decoding and bus
// mastering on, Relaxed Ordering off (§1.5), MSI-X on where it is used, BAR0 and the
// doorbell page of BAR2 mapped.
Result<void> configure_pci(Nic::State& nic) {
    const pci::Function& fn = nic.fn;
    // §1.1: nothing is reset or written before the function shows a Broadcom network
    // controller. Another device's BAR0 is no HWRM window: the request would land in its
    // registers or memory. P5 itself is decided by HWRM_VER_GET (ver_get).
    const std::uint16_t vendor = fn.config16(pci::config::vendor_id);
    const std::uint8_t base_class = fn.config8(pci::config::class_code + 2);
    if (vendor != hsi::pci_vendor_broadcom || base_class != (hsi::pci_class_ethernet >> 16))
        return fail(nic.bus, ": not a Broadcom network function (vendor ", text::hex(vendor, 4), ", base class ",
                    text::hex(base_class, 2), "); this driver speaks to bnxt P5 RoCE functions only");
    if (auto reset = fn.reset(); !reset) return fail("function level reset: ", reset.error());
    if (auto ro = fn.set_relaxed_ordering(false); !ro) return std::unexpected(std::move(ro).error());
    fn.set_memory_space(true);
    fn.set_bus_master(true);

    // §1.5: MSI-X on (the reset turned it off), unmasked, where Cq::wait sleeps on it.
    namespace config = pci::config;
    if (auto cap = fn.capability(config::capability_msix); cap && nic.options.interrupts == Interrupts::Auto) {
        const std::uint16_t control = fn.config16(*cap + config::msix_message_control);
        const auto vectors = static_cast<unsigned>(config::msix_table_size.of(control)) + 1u;
        fn.set_config16(*cap + config::msix_message_control,
                        static_cast<std::uint16_t>((control | config::msix_enable) & ~config::msix_function_mask));
        nic.interrupts = true;
        nic.nq.vector = vectors > 1 ? 1 : 0;  // vector 0 is the CREQ's
    }

    const auto bar0 = fn.bar(hsi::bar_registers);
    if (!bar0 || bar0->bytes < hsi::bar0::kong_trigger + hsi::bar0::register_bytes)
        return fail(nic.bus, ": BAR0 does not decode the HWRM and CMDQ registers (§1.3)");
    auto registers = fn.map(hsi::bar_registers, 0, hsi::bar0::kong_trigger + hsi::bar0::register_bytes);
    if (!registers) return std::unexpected(std::move(registers).error());
    nic.bar0 = *registers;

    const bool vf = is_vf(fn.config16(pci::config::device_id));
    const std::uint64_t page = vf ? hsi::bar2::doorbell_page_vf : hsi::bar2::doorbell_page_pf;
    const auto bar2 = fn.bar(hsi::bar_doorbells);
    if (!bar2 || bar2->bytes < page + hsi::bar2::doorbell_page_bytes)
        return fail(nic.bus, ": BAR2 does not decode the doorbell page at ", text::hex(page), " (§1.4)");
    auto doorbells = fn.map(hsi::bar_doorbells, page, hsi::bar2::doorbell_page_bytes);
    if (!doorbells) return std::unexpected(std::move(doorbells).error());
    nic.doorbells = *doorbells;

    auto response = DmaBuffer::allocate(fn, 4096, pci::Contiguity::Contiguous, "HWRM response buffer");
    if (!response) return std::unexpected(std::move(response).error());
    auto request = DmaBuffer::allocate(fn, 4096, pci::Contiguity::Contiguous, "HWRM request buffer");
    if (!request) return std::unexpected(std::move(request).error());
    nic.hwrm.emplace(nic.bus, nic.bar0, std::move(*response), std::move(*request), nic.clock,
                     nic.options.command_timeout);
    return {};
}

// §7.1 step 3, §3.6: the firmware's versions and the channel's parameters; P5 only.
Result<void> ver_get(Nic::State& nic) {
    hsi::VerGetRequest request{};
    request.hwrm_intf_maj = 1;
    request.hwrm_intf_min = 10;
    request.hwrm_intf_upd = 3;
    Result<Hwrm::Answer<hsi::VerGetResponse>> answer;
    for (unsigned attempt = 0; attempt < ver_get_attempts; ++attempt) {
        answer = nic.hwrm->ask<hsi::VerGetResponse>(hsi::ReqType::HWRM_VER_GET, request);
        if (answer && (answer->error_code != 0 || hsi::ver_get::DEV_NOT_RDY.of(answer->response.flags) == 0)) break;
    }
    if (!answer) return std::unexpected(std::move(answer).error());
    if (answer->error_code != 0) return nic.hwrm->refused(hsi::ReqType::HWRM_VER_GET, answer->error_code);
    // Fields past chip_num are optional (an older layout keeps the defaults).
    if (auto r = nic.hwrm->too_short(hsi::ReqType::HWRM_VER_GET, answer->resp_len,
                                     offsetof(hsi::VerGetResponse, chip_num) + sizeof(hsi::VerGetResponse::chip_num));
        !r)
        return r;
    const hsi::VerGetResponse& v = answer->response;
    if (hsi::ver_get::DEV_NOT_RDY.of(v.flags) != 0)
        return fail(nic.bus, ": the firmware is not ready (HWRM_VER_GET DEV_NOT_RDY) after ",
                    std::to_string(ver_get_attempts), " tries");
    const std::uint16_t chip = v.chip_num;
    if (chip != hsi::pci_device_bcm57508 && chip != hsi::pci_device_bcm57504 && chip != hsi::pci_device_bcm57502)
        return fail(nic.bus, ": chip ", text::hex(chip, 4), " is not a P5 (BCM5750x); this driver speaks P5 only");
    nic.hwrm->adopt(v);
    nic.firmware = "HWRM " + std::to_string(v.hwrm_intf_maj_8b) + "." + std::to_string(v.hwrm_intf_min_8b) + "." +
                   std::to_string(v.hwrm_intf_upd_8b) + ", firmware " + std::to_string(v.hwrm_fw_maj_8b) + "." +
                   std::to_string(v.hwrm_fw_min_8b) + "." + std::to_string(v.hwrm_fw_bld_8b);
    return {};
}

// §7.1 step 4, §3.7.
Result<void> func_reset(Nic::State& nic) {
    hsi::FuncResetRequest request{};
    request.func_reset_level = static_cast<std::uint8_t>(hsi::FuncResetLevel::RESETALL);
    auto r = nic.hwrm->call<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_FUNC_RESET, request);
    if (!r) return std::unexpected(std::move(r).error());
    return {};
}

// §7.1 step 5, §3.8: RoCE v2 must be offered (the GID rule speaks RoCEv2 only).
Result<void> func_qcaps(Nic::State& nic) {
    hsi::FuncQcapsRequest request{};
    request.fid = hsi::hwrm::fid_self;
    auto r = nic.hwrm->call<hsi::FuncQcapsResponse>(hsi::ReqType::HWRM_FUNC_QCAPS, request,
                                                    offsetof(hsi::FuncQcapsResponse, max_rsscos_ctx));
    if (!r) return std::unexpected(std::move(r).error());
    if (hsi::func_qcaps::ROCE_V2_SUPPORTED.of(r->flags) == 0)
        return fail(nic.bus, ": the function offers no RoCE v2 (HWRM_FUNC_QCAPS flags ", text::hex(r->flags, 8), ")");
    std::copy(r->mac_address.begin(), r->mac_address.end(), nic.mac.begin());
    return {};
}

// §7.1 step 6, §3.10.
Result<void> drv_rgtr(Nic::State& nic) {
    hsi::DrvRgtrRequest request{};
    request.flags = static_cast<std::uint32_t>(hsi::drv_rgtr::FLAGS_16BIT_VER_MODE(1));
    request.enables = static_cast<std::uint32_t>(hsi::drv_rgtr::ENABLES_OS_TYPE(1) | hsi::drv_rgtr::ENABLES_VER(1));
    request.os_type = hsi::drv_rgtr::os_type_other;
    request.ver_maj_8b = driver_major;
    request.ver_min_8b = driver_minor;
    request.ver_upd_8b = driver_update;
    request.ver_maj = driver_major;
    request.ver_min = driver_minor;
    request.ver_upd = driver_update;
    auto r = nic.hwrm->call<hsi::DrvRgtrResponse>(hsi::ReqType::HWRM_FUNC_DRV_RGTR, request);
    if (!r) return std::unexpected(std::move(r).error());
    nic.registered = true;
    return {};
}

// §7.1 step 7, §3.9: the current MAC and the port's MTU.
Result<void> func_qcfg(Nic::State& nic) {
    hsi::FuncQcfgRequest request{};
    request.fid = hsi::hwrm::fid_self;
    auto r = nic.hwrm->call<hsi::FuncQcfgResponse>(hsi::ReqType::HWRM_FUNC_QCFG, request,
                                                   offsetof(hsi::FuncQcfgResponse, pci_id));
    if (!r) return std::unexpected(std::move(r).error());
    if (std::any_of(r->mac_address.begin(), r->mac_address.end(), [](std::uint8_t b) { return b != 0; }))
        std::copy(r->mac_address.begin(), r->mac_address.end(), nic.mac.begin());
    // A port that reports no MTU is taken as standard Ethernet (1500 bytes).
    nic.mtu = path_mtu(r->admin_mtu != 0 ? r->admin_mtu.get() : 1500u);
    return {};
}

// §7.1 step 9, §3.12: the CREQ, an NQ-type ring, polled.
Result<void> alloc_creq(Nic::State& nic) {
    auto memory =
        allocate_queue(nic.fn, std::uint64_t{creq_entries} * hsi::creq::entry_bytes, poison_device_writes, "CREQ");
    if (!memory) return std::unexpected(std::move(memory).error());
    auto id = ring_alloc(nic, *memory, creq_entries, creq_vector);
    if (!id) return std::unexpected(std::move(id).error());
    nic.creq_memory = std::move(*memory);
    nic.creq_ring_id = *id;
    return {};
}

Result<std::uint16_t> ring_alloc(Nic::State& nic, const QueueMemory& memory, std::uint32_t entries, unsigned vector) {
    hsi::RingAllocRequest request{};
    request.ring_type = static_cast<std::uint8_t>(hsi::RingType::NQ);
    request.page_tbl_addr = memory.pages.base;
    request.page_size = 12;  // log2 of 4 KiB (§2.3)
    request.page_tbl_depth = static_cast<std::uint8_t>(memory.pages.level);
    request.length = entries;
    request.logical_id = static_cast<std::uint16_t>(vector);
    request.int_mode = static_cast<std::uint8_t>(nic.interrupts ? hsi::IntMode::MSIX : hsi::IntMode::POLL);
    if (memory.pages.level == hsi::PblLevel::LVL_2)
        return fail(nic.bus, ": a ring of ", std::to_string(entries), " entries needs more than one PTE page");
    auto r = nic.hwrm->call<hsi::RingAllocResponse>(hsi::ReqType::HWRM_RING_ALLOC, request);
    if (!r) return std::unexpected(std::move(r).error());
    if (r->ring_id == hsi::ring_id_invalid)
        return fail(nic.bus, ": HWRM_RING_ALLOC answered the invalid ring id 0xffff");
    return r->ring_id.get();
}

// §7.1 step 10, §3.13.
Result<void> stat_ctx_alloc(Nic::State& nic) {
    auto stats = DmaBuffer::allocate(nic.fn, stats_bytes, pci::Contiguity::Contiguous, "statistics buffer");
    if (!stats) return std::unexpected(std::move(stats).error());
    hsi::StatCtxAllocRequest request{};
    request.stats_dma_addr = stats->bus();
    request.update_period_ms = 1000;
    request.stat_ctx_flags = static_cast<std::uint8_t>(hsi::stat_ctx::ROCE(1));
    request.stats_dma_length = stats_dma_length;
    auto r = nic.hwrm->call<hsi::StatCtxAllocResponse>(hsi::ReqType::HWRM_STAT_CTX_ALLOC, request);
    if (!r) return std::unexpected(std::move(r).error());
    nic.stats = std::move(*stats);
    nic.stat_ctx_id = r->stat_ctx_id.get();
    return {};
}

// §7.1 step 11, §4.2: the CMDQ (one contiguous page, level 0) and the channel started.
// The CREQ is polled while a command waits, so it is not armed (§4.2 step 4).
Result<void> start_cmdq(Nic::State& nic) {
    auto cmdq =
        DmaBuffer::allocate(nic.fn, std::uint64_t{cmdq_depth} * hsi::slot_bytes, pci::Contiguity::Contiguous, "CMDQ");
    if (!cmdq) return std::unexpected(std::move(cmdq).error());
    cmdq->fill(poison_device_reads);
    auto side = DmaBuffer::allocate(nic.fn, 4096, pci::Contiguity::Contiguous, "side buffer");
    if (!side) return std::unexpected(std::move(side).error());
    const auto timeout = nic.hwrm->timeout(hsi::ReqType::HWRM_VER_GET);
    nic.rcfw.emplace(nic.bus, nic.bar0, nic.doorbells, std::move(*cmdq), cmdq_depth, std::move(nic.creq_memory),
                     creq_entries, nic.creq_ring_id, std::move(*side), nic.clock, timeout);
    nic.rcfw->qp_error = [&nic](std::uint32_t qpn) {
        if (Qp::State* qp = nic.find_qp(qpn)) {
            qp->state.store(QpState::Error, std::memory_order_release);
            qp->notified.store(true, std::memory_order_release);
            qp->send_cq->flush_pending.store(true, std::memory_order_release);
            qp->recv_cq->flush_pending.store(true, std::memory_order_release);
        }
    };
    nic.rcfw->start();
    return {};
}

// §7.1 step 12, §4.6.1-2: the limits every request is checked against, and the versions.
Result<void> query_func(Nic::State& nic) {
    std::array<std::byte, sizeof(hsi::QueryFuncSb)> side{};
    auto done = nic.rcfw->call_header(hsi::Opcode::QUERY_FUNC, side);
    if (!done) return std::unexpected(std::move(done).error());
    const auto sb = little_endian::load<hsi::QueryFuncSb>(side);
    // A function that cannot hold one queue pair, one work request beside the ring's spare
    // entry, one completion, one SGE, one region or one GID is of no use, and every create
    // would then throw as caller misuse: refuse it here, with the figures.
    std::string none;
    auto at_least = [&](const char* name, std::uint64_t value, std::uint64_t least) {
        if (value < least) none += (none.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(value);
    };
    at_least("max_qp", sb.max_qp, 1);
    at_least("max_qp_wr", sb.max_qp_wr, 2);
    at_least("max_cq", sb.max_cq, 1);
    at_least("max_cqe", sb.max_cqe, 2);
    at_least("max_sge", sb.max_sge, 1);
    at_least("max_mr", sb.max_mr, 1);
    at_least("max_gid", sb.max_gid, 1);
    at_least("max_mr_size", sb.max_mr_size, 1);
    if (!none.empty())
        return fail(nic.bus, ": QUERY_FUNC reports ", none,
                    ": the function cannot hold one queue pair with one work request and its completion "
                    "(max_qp_wr and max_cqe count the ring's spare entry, so each must be at least 2)");
    Limits& l = nic.limits;
    l.max_mr_size = sb.max_mr_size;
    l.max_qp = sb.max_qp;
    l.max_qp_wr = sb.max_qp_wr > 1 ? sb.max_qp_wr - 1u : 0u;  // the ring holds depth + 1
    l.max_cq = sb.max_cq;
    l.max_cqe = sb.max_cqe > 1 ? sb.max_cqe - 1u : 0u;
    l.max_sge = std::min<std::uint32_t>(sb.max_sge, hsi::wqe::max_sges);
    l.max_inline_data = std::min<std::uint32_t>(sb.max_inline_data, hsi::wqe::max_inline_bytes);
    l.max_mr = sb.max_mr;
    l.max_gid = sb.max_gid;
    l.max_qp_rd_atom = sb.max_qp_rd_atom;
    l.max_qp_init_rd_atom = sb.max_qp_init_rd_atom;
    nic.hw_retransmission = hsi::query_func::HW_REQUESTER_RETX_ENABLED.of(sb.dev_cap_flags) != 0;

    auto version = nic.rcfw->call_header(hsi::Opcode::QUERY_VERSION);
    if (!version) return std::unexpected(std::move(version).error());
    const auto v = little_endian::load<hsi::CreqQueryVersionCompletion>(little_endian::bytes_of(*version));
    nic.firmware +=
        ", RoCE " + std::to_string(v.intf_maj) + "." + std::to_string(v.intf_minor) + "." + std::to_string(v.intf_bld);
    return {};
}

// §7.1 step 13, §4.6.3: context memory came from the backing store (P5: fields 0). As
// Linux's bnxt_qplib_init_rcfw: HW_REQUESTER_RETX_SUPPORTED where QUERY_FUNC reports the
// hardware's requester retransmission (BNXT_RE_HW_RETX); OPTIMIZE_MODIFY_QP_SUPPORTED is
// left out (the driver does not take the optimized transitions, §4.6.9).
Result<void> initialize_fw(Nic::State& nic) {
    hsi::InitializeFw command{};
    command.header.flags =
        static_cast<std::uint16_t>(hsi::initialize_fw::HW_REQUESTER_RETX_SUPPORTED(nic.hw_retransmission ? 1 : 0));
    const std::uint64_t page = nic.fn.machine().page();
    command.log2_dbr_pg_size = static_cast<std::uint16_t>(
        hsi::initialize_fw::log2_dbr_pg_size(page >= 4096 ? std::bit_width(page) - 1 - 12 : 0));
    command.stat_ctx_id = *nic.stat_ctx_id;
    auto done = nic.rcfw->call(hsi::Opcode::INITIALIZE_FW, command);
    if (!done) return std::unexpected(std::move(done).error());
    nic.fw_initialized = true;
    return {};
}

// §7.1 step 15: the notification queue every CQ names; its vector is the one Cq::wait
// sleeps on. Armed only by a waiter (§5.6: a polling driver never arms).
Result<void> alloc_nq(Nic::State& nic) {
    auto memory = allocate_queue(nic.fn, std::uint64_t{nq_entries} * hsi::nq::entry_bytes, poison_device_writes, "NQ");
    if (!memory) return std::unexpected(std::move(memory).error());
    auto id = ring_alloc(nic, *memory, nq_entries, nic.nq.vector);
    if (!id) return std::unexpected(std::move(id).error());
    nic.nq.ring = std::move(*memory);
    nic.nq.entries = nq_entries;
    nic.nq.cons = detail::RingPosition(nq_entries);
    nic.nq.ring_id = *id;
    return {};
}

// §7.1 step 16, §4.6.5: each address of the table once, in table order (bnxt_re shares one
// firmware entry between an address's RoCEv1 and RoCEv2 GIDs); the GID of the queue pairs
// by the rule of gid.hpp (docs/bugs.md, B19).
Result<void> add_gid(Nic::State& nic) {
    std::vector<GidEntry> table = nic.options.gids;
    if (table.empty() && !nic.options.address.empty()) {
        const auto address = parse_address(nic.options.address);
        if (!address)
            return fail(nic.bus, ": Options::address \"", nic.options.address,
                        "\" is neither an IPv4 nor an IPv6 address (numeric, as \"10.0.0.1\" or \"2001:db8::1\")");
        table = address_gids(nic.mac, *address);
    }
    if (table.empty()) table = default_gids(nic.mac);
    nic.gids = std::move(table);
    const auto chosen = choose_gid(nic.gids, nic.options.link_local);
    if (!chosen) {
        std::string listed;
        for (const GidEntry& e : nic.gids)
            listed += (listed.empty() ? "" : ", ") + to_string(e.gid) + (e.version == RoceVersion::V2 ? " v2" : " v1");
        return fail(nic.bus, ": no routable RoCEv2 GID among {", listed,
                    "}; pass the port's address in Options::address (or allow link-local GIDs)");
    }
    nic.gid_chosen = *chosen;
    nic.gid = nic.gids[*chosen].gid;
    nic.gid_firmware.assign(nic.gids.size(), 0);
    for (std::size_t i = 0; i < nic.gids.size(); ++i) {
        const GidEntry& e = nic.gids[i];
        const auto same = std::find_if(nic.gids.begin(), nic.gids.begin() + static_cast<std::ptrdiff_t>(i),
                                       [&](const GidEntry& earlier) { return earlier.gid == e.gid; });
        if (same != nic.gids.begin() + static_cast<std::ptrdiff_t>(i)) {
            nic.gid_firmware[i] = nic.gid_firmware[static_cast<std::size_t>(same - nic.gids.begin())];
            continue;
        }
        hsi::AddGid command{};
        command.gid = hsi::add_gid_bytes(e.gid);
        command.src_mac = hsi::add_gid_mac(nic.mac);
        auto done = nic.rcfw->call(hsi::Opcode::ADD_GID, command);
        if (!done) return std::unexpected(std::move(done).error());
        nic.gid_firmware[i] = static_cast<std::uint16_t>(done->xid.get());
        nic.added_gids.push_back(nic.gid_firmware[i]);
    }
    nic.gid_index = nic.gid_firmware[*chosen];
    return {};
}

Result<void> bring_up(Nic::State& nic) {
    using Step = Result<void> (*)(Nic::State&);
    for (Step step : {configure_pci, ver_get, func_reset, func_qcaps, drv_rgtr, func_qcfg, backing_store, alloc_creq,
                      stat_ctx_alloc, start_cmdq, query_func, initialize_fw, alloc_nq, add_gid}) {
        if (auto r = step(nic); !r) return r;
    }
    return {};
}

}  // namespace rig::bnxt
