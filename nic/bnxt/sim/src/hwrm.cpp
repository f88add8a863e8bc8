// The HWRM channel of the model (docs/hsi.md §3): a request taken from the BAR0
// window (or, in short mode, fetched by DMA), executed, and its response DMA'd to
// resp_addr: every byte with `valid` = 0, then the `valid` byte = 1 (§3.1 "Model
// procedure"). A response carries the request's req_type and seq_id and resp_len = its
// size. Commands of §3.5 that the model does not implement answer CMD_NOT_SUPPORTED.
//
// Short mode (§3.1) only where VER_GET advertises it (ModelOptions::short_commands): a firmware
// without it reads the 16-byte descriptor as a request, whose cmpl_ring (the signature)
// makes it INVALID_PARAMS, answered at "resp_addr" (the descriptor's req_addr). A short
// request longer than max_ext_req_len is answered INVALID_PARAMS from its header alone.
//
// The bring-up order the firmware holds the driver to (Linux's bnxt_fw_init_one_p1 / _p2
// and bnxt_open send the commands in it), each refusal with its status [UNCERTAIN: the
// public sources give the order, not the status of a command sent out of it]:
//   - before HWRM_VER_GET tells the firmware the driver's interface version, every other
//     command: FAIL;
//   - before HWRM_FUNC_DRV_RGTR, the commands that take resources of the function
//     (FUNC_CFG, RING_ALLOC/FREE, STAT_CTX_ALLOC/FREE): RESOURCE_ACCESS_DENIED; what Linux
//     sends before registering (FUNC_RESET, FUNC_QCAPS, FUNC_QCFG, QUEUE_QPORTCFG and the
//     backing store, from bnxt_hwrm_func_qcaps) is accepted;
//   - before HWRM_FUNC_BACKING_STORE_CFG gave the chip its context memory, RING_ALLOC and
//     STAT_CTX_ALLOC: RESOURCE_ALLOC_ERROR (§3.11: "before any ring can be created").
// FUNC_RESET forgets the registration and the context memory; a Function Level Reset
// (power_on) forgets VER_GET too.
#include <algorithm>

#include "firmware.hpp"
#include "rig/bnxt/hsi/cqe.hpp"
#include "rig/bnxt/hsi/pbl.hpp"
#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::sim::detail {

using hsi::HwrmError;
using hsi::ReqType;

namespace {

// §3.12: NQs of up to Linux's NQ size, on one page of PTEs at most.
constexpr std::uint32_t nq_max_length = 1u << 17;
constexpr std::uint64_t nq_max_bytes_depth_1 = hsi::pte::entries_per_page * hsi::pte::table_page_bytes;
// §3.12: ring ids are non-zero; the model hands out first_ring_id .. first_ring_id + ring_ids - 1.
constexpr std::uint16_t first_ring_id = 0x40;
constexpr std::uint16_t ring_ids = 0xF00;
// §3.6: what VER_GET reports: HSI 1.10.3 (build 129), the request window
// and the largest response of the HSI version.
constexpr std::uint8_t hsi_major = 1, hsi_minor = 10, hsi_update = 3;
constexpr std::uint16_t hsi_patch = 129;
constexpr std::uint16_t request_window_bytes = 128;
constexpr std::uint16_t response_max_bytes = 704;

// A response with its length and `valid` set (§3.1), as a successful answer.
template <class Response>
Firmware::HwrmAnswer answer(Response r) {
    r.header.resp_len = static_cast<std::uint16_t>(sizeof(Response));
    r.valid = hsi::hwrm::valid;
    return {HwrmError::SUCCESS, bytes_of(r)};
}

// The 16-byte response of a command that answers nothing but its status.
hsi::HwrmErrorResponse header_only() {
    hsi::HwrmErrorResponse r{};
    r.header.resp_len = static_cast<std::uint16_t>(sizeof r);
    r.valid = hsi::hwrm::valid;
    return r;
}

}  // namespace

void Firmware::hwrm(Bytes window) {
    ++counters_.hwrm_commands;
    Bytes request = std::move(window);
    const auto descriptor = load<hsi::HwrmShortRequest>(request);
    bool too_long = false;
    if (options_.short_commands && descriptor.signature == hsi::hwrm::short_signature) {
        // §3.1 short mode: the full request lives in DMA memory.
        const std::size_t size = descriptor.size;
        if (size < sizeof(hsi::HwrmRequestHeader)) {
            ++counters_.bad_descriptors;  // no response address to answer on
            return;
        }
        too_long = size > options_.max_ext_req_len;
        request.assign(too_long ? sizeof(hsi::HwrmRequestHeader) : size, std::byte{0});
        if (!bus_.read(descriptor.req_addr, request)) return;  // counted; nowhere to answer
    }
    const auto header = load<hsi::HwrmRequestHeader>(request);
    const auto fault = faults_.take_hwrm(header.req_type);
    if (fault && fault->kind == FaultKind::drop) return;

    HwrmAnswer outcome;
    if (fault && fault->kind == FaultKind::refuse) {
        outcome = HwrmAnswer::fail(static_cast<HwrmError>(fault->code));
    } else if (too_long || header.cmpl_ring != hsi::hwrm::cmpl_ring_none ||
               header.target_id != hsi::hwrm::target_id_self) {
        // The model has no completion rings and no other functions to act for.
        outcome = HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    } else if (const HwrmError order = out_of_order(static_cast<ReqType>(header.req_type.get()));
               order != HwrmError::SUCCESS) {
        outcome = HwrmAnswer::fail(order);
    } else {
        outcome = hwrm_execute(request);
    }
    Bytes out = std::move(outcome.response);
    if (outcome.error != HwrmError::SUCCESS || out.empty() || (fault && fault->kind == FaultKind::truncate))
        out = bytes_of(header_only());
    auto h = load<hsi::HwrmResponseHeader>(out);
    h.error_code = static_cast<std::uint16_t>(outcome.error);
    h.req_type = header.req_type;
    h.seq_id = static_cast<std::uint16_t>(header.seq_id - (fault && fault->kind == FaultKind::stale ? 1 : 0));
    h.resp_len = static_cast<std::uint16_t>(out.size());
    rig::little_endian::store(std::span(out), h);
    // §3.1: every byte with valid = 0, then the valid byte alone. seq_id and resp_len
    // (bytes 4..7), which the driver polls first, go last as one aligned 4-byte write (a
    // release, rig/sim/device.hpp), so a driver that sees them sees the rest (TSan).
    faults_.tamper(testing::Written::hwrm_response, std::span(out).first(out.size() - 1));  // a hostile device
    out.back() = std::byte{0};
    if (!bus_.write(header.resp_addr, std::span(out).first(4))) return;
    if (!bus_.write(header.resp_addr + 8, std::span(out).subspan(8))) return;
    if (!bus_.write(header.resp_addr + 4, std::span(out).subspan(4, 4))) return;
    const std::byte valid{hsi::hwrm::valid};
    bus_.write(header.resp_addr + out.size() - 1, std::span(&valid, 1));
}

HwrmError Firmware::out_of_order(ReqType type) const {
    if (type == ReqType::HWRM_VER_GET) return HwrmError::SUCCESS;
    if (!version_known_) return HwrmError::FAIL;
    switch (type) {
    case ReqType::HWRM_FUNC_CFG:
    case ReqType::HWRM_RING_FREE:
    case ReqType::HWRM_STAT_CTX_FREE:
        return driver_registered_ ? HwrmError::SUCCESS : HwrmError::RESOURCE_ACCESS_DENIED;
    case ReqType::HWRM_RING_ALLOC:
    case ReqType::HWRM_STAT_CTX_ALLOC:
        if (!driver_registered_) return HwrmError::RESOURCE_ACCESS_DENIED;
        return context_.configured ? HwrmError::SUCCESS : HwrmError::RESOURCE_ALLOC_ERROR;
    default: return HwrmError::SUCCESS;
    }
}

Firmware::HwrmAnswer Firmware::hwrm_execute(std::span<const std::byte> request) {
    struct Entry {
        ReqType type;
        HwrmAnswer (Firmware::*handler)(std::span<const std::byte>);
    };
    static constexpr Entry table[] = {
        {ReqType::HWRM_VER_GET, &Firmware::ver_get},
        {ReqType::HWRM_FUNC_RESET, &Firmware::func_reset},
        {ReqType::HWRM_FUNC_QCAPS, &Firmware::func_qcaps},
        {ReqType::HWRM_FUNC_QCFG, &Firmware::func_qcfg},
        {ReqType::HWRM_FUNC_CFG, &Firmware::func_cfg},
        {ReqType::HWRM_FUNC_DRV_RGTR, &Firmware::func_drv_rgtr},
        {ReqType::HWRM_FUNC_DRV_UNRGTR, &Firmware::func_drv_unrgtr},
        {ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, &Firmware::func_backing_store_qcaps},
        {ReqType::HWRM_FUNC_BACKING_STORE_CFG, &Firmware::func_backing_store_cfg},
        {ReqType::HWRM_QUEUE_QPORTCFG, &Firmware::queue_qportcfg},
        {ReqType::HWRM_RING_ALLOC, &Firmware::ring_alloc},
        {ReqType::HWRM_RING_FREE, &Firmware::ring_free},
        {ReqType::HWRM_STAT_CTX_ALLOC, &Firmware::stat_ctx_alloc},
        {ReqType::HWRM_STAT_CTX_FREE, &Firmware::stat_ctx_free},
    };
    const auto type = static_cast<ReqType>(load<hsi::HwrmRequestHeader>(request).req_type.get());
    for (const Entry& e : table)
        if (e.type == type) return (this->*e.handler)(request);
    // FUNC_RESOURCE_QCAPS, BACKING_STORE_QCFG and everything else.
    return HwrmAnswer::fail(HwrmError::CMD_NOT_SUPPORTED);
}

Firmware::HwrmAnswer Firmware::ver_get(std::span<const std::byte>) {
    // §3.6 model semantics: always succeed; short mode where ModelOptions::short_commands.
    version_known_ = true;
    hsi::VerGetResponse r{};
    r.hwrm_intf_maj_8b = hsi_major;
    r.hwrm_intf_min_8b = hsi_minor;
    r.hwrm_intf_upd_8b = hsi_update;
    r.hwrm_fw_maj_8b = firmware_major;
    r.roce_fw_8b = {firmware_major, 0, 0, 0};
    r.chip_num = hsi::pci_device_bcm57508;
    r.max_req_win_len = request_window_bytes;
    r.max_resp_len = response_max_bytes;
    r.def_req_timeout = hsi::hwrm::def_req_timeout_ms;
    r.flags = static_cast<std::uint8_t>(hsi::ver_get::EXT_VER_AVAIL(1));
    r.always_1 = 1;
    r.hwrm_intf_major = hsi_major;
    r.hwrm_intf_minor = hsi_minor;
    r.hwrm_intf_build = hsi_update;
    r.hwrm_intf_patch = hsi_patch;
    r.hwrm_fw_major = firmware_major;
    r.roce_fw = {firmware_major, 0, 0, 0};
    if (options_.short_commands) {
        r.dev_caps_cfg = static_cast<std::uint32_t>(hsi::ver_get::SHORT_CMD_SUPPORTED(1));
        r.max_ext_req_len = options_.max_ext_req_len;
    }
    r.max_req_timeout = hsi::hwrm::max_timeout_ms;
    return answer(r);
}

Firmware::HwrmAnswer Firmware::func_reset(std::span<const std::byte>) {
    function_reset();
    return {};
}

Firmware::HwrmAnswer Firmware::func_qcaps(std::span<const std::byte> request) {
    const auto q = load<hsi::FuncQcapsRequest>(request);
    if (q.fid != hsi::hwrm::fid_self && q.fid != 0) return HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    hsi::FuncQcapsResponse r{};
    r.fid = 0;
    r.port_id = 0;
    r.flags = static_cast<std::uint32_t>(hsi::func_qcaps::ROCE_V1_SUPPORTED(1) | hsi::func_qcaps::ROCE_V2_SUPPORTED(1));
    r.mac_address = options_.mac;
    r.max_rsscos_ctx = 0;
    r.max_cmpl_rings = options_.limits.max_rings;
    r.max_stat_ctx = options_.limits.max_stat_ctx;
    return answer(r);
}

Firmware::HwrmAnswer Firmware::func_qcfg(std::span<const std::byte> request) {
    const auto q = load<hsi::FuncQcfgRequest>(request);
    if (q.fid != hsi::hwrm::fid_self && q.fid != 0) return HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    hsi::FuncQcfgResponse r{};
    r.fid = 0;
    r.mac_address = options_.mac;
    r.alloc_cmpl_rings = options_.limits.max_rings;
    r.admin_mtu = options_.port_mtu;
    r.mru = options_.port_mtu;
    r.alloc_msix = static_cast<std::uint16_t>(options_.msix_vectors);
    r.l2_doorbell_bar_size_kb = static_cast<std::uint16_t>(hsi::bar2::doorbell_page_pf / 1024);
    return answer(r);
}

// Resource reservation: nothing to reserve in the model.
Firmware::HwrmAnswer Firmware::func_cfg(std::span<const std::byte>) { return {}; }

Firmware::HwrmAnswer Firmware::func_drv_rgtr(std::span<const std::byte>) {
    driver_registered_ = true;
    return answer(hsi::DrvRgtrResponse{});
}

Firmware::HwrmAnswer Firmware::func_drv_unrgtr(std::span<const std::byte>) {
    driver_registered_ = false;
    return {};
}

Firmware::HwrmAnswer Firmware::queue_qportcfg(std::span<const std::byte>) {
    // One port, TX and RX alike: queue ids 0..n-1, every queue lossy.
    hsi::QueueQportcfgResponse r{};
    r.max_configurable_queues = std::min(options_.cos_queues, hsi::queue_qportcfg::max_queues);
    for (std::uint8_t q = 0; q < r.max_configurable_queues; ++q) r.queue_id_service_profile[2u * q] = q;
    return answer(r);
}

Firmware::HwrmAnswer Firmware::ring_alloc(std::span<const std::byte> request) {
    const auto q = load<hsi::RingAllocRequest>(request);
    // §3.12: the model has NQ-type rings only (no L2 rings: a gap, stated).
    const bool power_of_two = q.length >= 2 && (q.length & (q.length - 1)) == 0;
    const bool msix = q.int_mode == static_cast<std::uint8_t>(hsi::IntMode::MSIX);
    if (q.ring_type != static_cast<std::uint8_t>(hsi::RingType::NQ) || !power_of_two || q.length > nq_max_length ||
        q.page_tbl_depth > 1 || q.page_tbl_addr % hsi::pte::table_page_bytes != 0 ||
        (msix && q.logical_id >= options_.msix_vectors) ||
        (q.page_tbl_depth == 1 && std::uint64_t{q.length} * hsi::nq::entry_bytes > nq_max_bytes_depth_1))
        return HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    if (rings_.size() >= options_.limits.max_rings) return HwrmAnswer::fail(HwrmError::RESOURCE_ALLOC_ERROR);
    std::uint16_t id = 0;
    do {
        id = static_cast<std::uint16_t>(first_ring_id + next_ring_id_++ % ring_ids);
    } while (rings_.contains(id));
    NqRing ring;
    ring.id = id;
    ring.logical_id = q.logical_id;
    ring.int_mode = static_cast<hsi::IntMode>(q.int_mode);
    // Depth 0: one contiguous buffer (page_size is ignored, [CORRECTED]); depth 1:
    // a page of PTEs naming 4 KiB pages.
    ring.memory = PageList(q.page_tbl_depth, 12, q.page_tbl_addr);
    ring.length = q.length;
    rings_.emplace(id, std::move(ring));
    hsi::RingAllocResponse r{};
    r.ring_id = id;
    r.logical_ring_id = q.logical_id;
    return answer(r);
}

Firmware::HwrmAnswer Firmware::ring_free(std::span<const std::byte> request) {
    const auto q = load<hsi::RingFreeRequest>(request);
    auto it = rings_.find(q.ring_id);
    if (q.ring_type != static_cast<std::uint8_t>(hsi::RingType::NQ) || it == rings_.end())
        return HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    if (it->second.cq_users > 0) return HwrmAnswer::fail(HwrmError::RESOURCE_LOCKED);  // CQs still notify it
    if (channel_.latched && channel_.creq == q.ring_id) channel_.latched = false;
    rings_.erase(it);
    return {};
}

Firmware::HwrmAnswer Firmware::stat_ctx_alloc(std::span<const std::byte>) {
    if (stat_ctxs_.size() >= options_.limits.max_stat_ctx) return HwrmAnswer::fail(HwrmError::RESOURCE_ALLOC_ERROR);
    std::uint32_t id = 0;
    do {
        id = 1 + next_stat_ctx_++ % 0xFFFF;  // never 0: a field left unfilled
    } while (stat_ctxs_.contains(id));
    stat_ctxs_.emplace(id, false);
    hsi::StatCtxAllocResponse r{};
    r.stat_ctx_id = id;
    return answer(r);
}

Firmware::HwrmAnswer Firmware::stat_ctx_free(std::span<const std::byte> request) {
    const auto q = load<hsi::StatCtxFreeRequest>(request);
    auto it = stat_ctxs_.find(q.stat_ctx_id);
    if (it == stat_ctxs_.end()) return HwrmAnswer::fail(HwrmError::INVALID_PARAMS);
    // INITIALIZE_FW holds it until DEINITIALIZE_FW.
    if (it->second) return HwrmAnswer::fail(HwrmError::RESOURCE_LOCKED);
    stat_ctxs_.erase(it);
    return {};
}

void Firmware::function_reset() {
    // §3.7: every ring, stats context and all RoCE state of the function goes; the RoCE
    // channel returns to "not initialized".
    destroy_roce_objects();
    gids_.assign(options_.limits.max_gid, std::nullopt);
    channel_ = Channel{};
    rings_.clear();
    stat_ctxs_.clear();
    driver_registered_ = false;
    context_ = ContextMemory{};
}

void Firmware::power_on() {
    function_reset();
    version_known_ = false;
    next_ring_id_ = 0;
    next_stat_ctx_ = 0;
    next_cq_ = 0;
    next_qpn_ = 2;
    next_mr_index_ = 0;
}

}  // namespace rig::bnxt::sim::detail
