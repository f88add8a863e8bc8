// The memory-region table at work (docs/hsi.md §6): access checks and translation.
//
// Local access through an SGE (§5.7.1 step 2): the l_key names a registered MR of the QP's
// PD covering [va, va + size); writes (receive buffers, RDMA READ destinations) need
// LOCAL_WRITE. With RESERVED_LKEY_ENABLE the reserved L_Key 0xFFFFFFFF takes va as a bus
// address [UNCERTAIN: the firmware's exact semantics, §5.2.3].
// Remote access (§5.7.1 step 3): the R_Key names a registered MR of the responder QP's PD
// (else RX_INVALID_R_KEY); the MR grants REMOTE_READ / REMOTE_WRITE in its encoding and
// the QP in its own (§6.4) (else RX_NO_PERMISSION); the range lies inside (else
// RX_RANGE_ERROR). A zero-length access checks nothing (IB).
// Translation (§6.2): bounds from va (0 with ZERO_BASED), page index (A >> P) - (va >> P),
// the page list at the MR's level; the DMA MR (level 0, pbl 0, va 0, unlimited) is the
// identity. A region written with ENABLE_RO (relaxed ordering) gets each packet's bytes in
// 64-byte pieces, last first: PCIe lets such writes pass each other (B27); the CQE still
// comes after them all. The model sees only the MR flag, not Device Control's RO enable,
// which is the machine's (a gap, stated).
#include <algorithm>

#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

namespace {

constexpr std::size_t relaxed_piece = 64;

bool in_region(const Mr& mr, std::uint64_t a, std::uint64_t length) {
    if (mr.size == hsi::register_mr::mr_size_unlimited) return true;
    const std::uint64_t start = (mr.access & hsi::mr_access::ZERO_BASED) ? 0 : mr.va;
    return a >= start && length <= mr.size && a - start <= mr.size - length;
}

std::uint64_t list_offset(const Mr& mr, std::uint64_t a) {
    if (mr.access & hsi::mr_access::ZERO_BASED) return a;
    const std::uint64_t page_mask = (std::uint64_t{1} << mr.log2_page) - 1;
    return a - (mr.va & ~page_mask);
}

}  // namespace

namespace {

bool reserved(const Qp& qp, const Sge& sge) {
    return sge.lkey == hsi::reserved_lkey && hsi::create_qp::RESERVED_LKEY_ENABLE.of(qp.flags);
}

// The checks of a non-empty SGE whose l_key names `mr`.
bool local_allows(const Qp& qp, const Mr& mr, const Sge& sge, bool write) {
    return mr.registered && mr.pd == qp.pd && in_region(mr, sge.va, sge.size) &&
           (!write || (mr.access & hsi::mr_access::LOCAL_WRITE));
}

}  // namespace

bool Firmware::local_ok(const Qp& qp, const Sge& sge, bool write) const {
    if (sge.size == 0 || reserved(qp, sge)) return true;
    auto it = mrs_.find(sge.lkey);
    return it != mrs_.end() && local_allows(qp, it->second, sge, write);
}

std::optional<hsi::ResErrStateReason> Firmware::remote_check(const Qp& qp, std::uint32_t rkey, std::uint64_t va,
                                                             std::uint64_t length, bool write) {
    if (length == 0) return std::nullopt;
    const Mr* mr = find_mr(rkey);
    if (!mr || !mr->registered || mr->pd != qp.pd) return hsi::ResErrStateReason::RX_INVALID_R_KEY;
    const std::uint8_t mr_right = write ? hsi::mr_access::REMOTE_WRITE : hsi::mr_access::REMOTE_READ;
    const std::uint8_t qp_right = write ? hsi::qp_access::REMOTE_WRITE : hsi::qp_access::REMOTE_READ;
    if (!(mr->access & mr_right) || !(qp.access & qp_right)) return hsi::ResErrStateReason::RX_NO_PERMISSION;
    if (!in_region(*mr, va, length)) return hsi::ResErrStateReason::RX_RANGE_ERROR;
    return std::nullopt;
}

bool Firmware::mr_copy_out(Mr& mr, std::uint64_t va, std::span<std::byte> out) {
    return read_list(bus_, mr.pages, list_offset(mr, va), out);
}

bool Firmware::mr_copy_in(Mr& mr, std::uint64_t va, std::span<const std::byte> in) {
    const std::uint64_t offset = list_offset(mr, va);
    if (!mr.relaxed) return write_list(bus_, mr.pages, offset, in);
    for (std::size_t end = in.size(); end > 0;) {
        const std::size_t begin = end > relaxed_piece ? ((end - 1) / relaxed_piece) * relaxed_piece : 0;
        if (!write_list(bus_, mr.pages, offset + begin, in.subspan(begin, end - begin))) return false;
        end = begin;
    }
    return true;
}

namespace {

// Calls `access(sge, offset in the SGE, bytes)` for each SGE piece of message bytes
// [offset, offset + n).
template <class Access>
LocalResult each_piece(const std::vector<Sge>& sges, std::uint64_t offset, std::size_t n, Access access) {
    std::size_t done = 0;
    for (const Sge& sge : sges) {
        if (done == n) break;
        if (offset >= sge.size) {
            offset -= sge.size;
            continue;
        }
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(sge.size - offset, n - done));
        if (auto r = access(sge, offset, done, take); r != LocalResult::ok) return r;
        done += take;
        offset = 0;
    }
    return done == n ? LocalResult::ok : LocalResult::protection;
}

}  // namespace

LocalResult Firmware::gather(const Qp& qp, const std::vector<Sge>& sges, std::uint64_t offset,
                             std::span<std::byte> out) {
    return each_piece(sges, offset, out.size(), [&](const Sge& sge, std::uint64_t at, std::size_t done, std::size_t n) {
        // each_piece passes only SGEs with bytes: local_ok's checks, one lookup.
        const auto piece = out.subspan(done, n);
        if (reserved(qp, sge)) return bus_.read(sge.va + at, piece) ? LocalResult::ok : LocalResult::bus;
        Mr* mr = find_mr(sge.lkey);
        if (!mr || !local_allows(qp, *mr, sge, false)) return LocalResult::protection;
        return mr_copy_out(*mr, sge.va + at, piece) ? LocalResult::ok : LocalResult::bus;
    });
}

LocalResult Firmware::scatter(const Qp& qp, const std::vector<Sge>& sges, std::uint64_t offset,
                              std::span<const std::byte> in) {
    return each_piece(sges, offset, in.size(), [&](const Sge& sge, std::uint64_t at, std::size_t done, std::size_t n) {
        const auto piece = in.subspan(done, n);
        if (reserved(qp, sge)) return bus_.write(sge.va + at, piece) ? LocalResult::ok : LocalResult::bus;
        Mr* mr = find_mr(sge.lkey);
        if (!mr || !local_allows(qp, *mr, sge, true)) return LocalResult::protection;
        return mr_copy_in(*mr, sge.va + at, piece) ? LocalResult::ok : LocalResult::bus;
    });
}

}  // namespace rig::bnxt::sim::detail
