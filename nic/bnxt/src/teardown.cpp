// Driver teardown, docs/hsi.md §7.4, in its order: what the caller left (queue pairs,
// regions, completion queues), then what bring-up set up, each step only where bring-up
// got that far. Every step is attempted; the first error is kept. Nic::close then
// releases the function, which turns bus mastering off before it gives back the memory.
#include <array>

#include "bringup.hpp"

namespace rig::bnxt {
namespace {

// §7.4 step 4, §4.6.5: every GID added, the last first; the first refusal is the Error.
Result<void> delete_gids(Nic::State& nic) {
    Result<void> first;
    while (!nic.added_gids.empty()) {
        hsi::DeleteGid command{};
        command.gid_index = nic.added_gids.back();
        nic.added_gids.pop_back();
        auto done = nic.rcfw->call(hsi::Opcode::DELETE_GID, command);
        if (!done && first) first = std::unexpected(std::move(done).error());
    }
    nic.gid_index.reset();
    return first;
}

// §7.4 steps 5 and 8, §3.12.
Result<void> ring_free(Nic::State& nic, std::uint16_t ring_id) {
    hsi::RingFreeRequest request{};
    request.ring_type = static_cast<std::uint8_t>(hsi::RingType::NQ);
    request.ring_id = ring_id;
    auto r = nic.hwrm->call<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_RING_FREE, request);
    if (!r) return std::unexpected(std::move(r).error());
    return {};
}

// §7.4 step 6, §4.6.4.
Result<void> deinitialize_fw(Nic::State& nic) {
    auto done = nic.rcfw->call_header(hsi::Opcode::DEINITIALIZE_FW);
    if (!done) return std::unexpected(std::move(done).error());
    nic.fw_initialized = false;
    return {};
}

// §7.4 step 7, §3.13.
Result<void> stat_ctx_free(Nic::State& nic) {
    hsi::StatCtxFreeRequest request{};
    request.stat_ctx_id = *nic.stat_ctx_id;
    auto r = nic.hwrm->call<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_STAT_CTX_FREE, request);
    if (!r) return std::unexpected(std::move(r).error());
    nic.stat_ctx_id.reset();
    return {};
}

// §7.4 step 9, §3.10.
Result<void> drv_unrgtr(Nic::State& nic) {
    hsi::DrvUnrgtrRequest request{};
    auto r = nic.hwrm->call<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_FUNC_DRV_UNRGTR, request);
    if (!r) return std::unexpected(std::move(r).error());
    nic.registered = false;
    return {};
}

}  // namespace

void Nic::State::teardown(std::optional<std::string>& first_error) {
    auto note = [&](Result<void> r) {
        if (!r && !first_error) first_error = std::move(r).error();
    };
    // Steps 1-3: the caller's objects, newest kind first. Each leaves its registry
    // whether or not the firmware agreed: the release below ends them all.
    for (Qp::State* qp : std::vector<Qp::State*>(qps)) {
        note(qp->destroy_locked());
        qp->retire(Memory::KeepUntilClose);
    }
    for (Region::State* region : std::vector<Region::State*>(regions)) note(region->deregister_locked());
    for (Cq::State* cq : std::vector<Cq::State*>(cqs)) {
        note(cq->destroy_locked());
        cq->retire(Memory::KeepUntilClose);
    }

    if (rcfw && !added_gids.empty()) note(delete_gids(*this));  // step 4
    if (hwrm && nq.ring_id != hsi::ring_id_invalid) {           // step 5
        note(ring_free(*this, nq.ring_id));
        nq.ring_id = hsi::ring_id_invalid;
    }
    if (rcfw && fw_initialized) note(deinitialize_fw(*this));  // step 6
    if (hwrm && stat_ctx_id) note(stat_ctx_free(*this));       // step 7
    rcfw.reset();                                              // step 8
    if (hwrm && creq_ring_id != hsi::ring_id_invalid) {
        note(ring_free(*this, creq_ring_id));
        creq_ring_id = hsi::ring_id_invalid;
    }
    if (hwrm && registered) note(drv_unrgtr(*this));  // step 9
}

Qp::State* Nic::State::find_qp(std::uint32_t qpn) const {
    for (Qp::State* qp : qps)
        if (qp->qpn == qpn) return qp;
    return nullptr;
}

}  // namespace rig::bnxt
