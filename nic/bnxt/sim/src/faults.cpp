// Test-only fault injection (testing/faults.hpp), the plan the Firmware consults, and the
// test-only views of the framing (testing/frames.hpp).
#include "rig/bnxt/sim/testing/faults.hpp"

#include "crc32.hpp"
#include "impl.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim {

namespace detail {

namespace {
template <class Map, class Key>
std::optional<PlannedFault> take(Map& map, Key key) {
    auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    PlannedFault f = it->second;
    if (it->second.times != testing::Faults::always && --it->second.times == 0) map.erase(it);
    return f;
}
}  // namespace

void FaultPlan::plan_hwrm(hsi::ReqType type, PlannedFault f) {
    std::lock_guard lock(mutex_);
    if (f.times > 0) hwrm_.emplace(static_cast<std::uint16_t>(type), f);
}
void FaultPlan::plan_rcfw(hsi::Opcode op, PlannedFault f) {
    std::lock_guard lock(mutex_);
    if (f.times > 0) rcfw_.emplace(static_cast<std::uint8_t>(op), f);
}
void FaultPlan::plan_frame_drops(unsigned count) {
    std::lock_guard lock(mutex_);
    frame_drops_ += count;
}
void FaultPlan::plan_cqe_rewrite(std::function<void(std::span<std::byte, 32>)> rewrite, unsigned times) {
    std::lock_guard lock(mutex_);
    cqe_rewrite_ = std::move(rewrite);
    cqe_rewrites_ = times;
    cqe_rewrite_armed_ = times > 0 && cqe_rewrite_;
}
void FaultPlan::rewrite_cqe(std::span<std::byte, 32> cqe) {
    if (!cqe_rewrite_armed_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    if (cqe_rewrites_ == 0 || !cqe_rewrite_) return;
    cqe_rewrite_(cqe);
    if (cqe_rewrites_ != testing::Faults::always && --cqe_rewrites_ == 0) cqe_rewrite_armed_ = false;
}
void FaultPlan::plan_tamper(testing::Faults::Tamper tamper) {
    std::lock_guard lock(mutex_);
    tamper_ = std::move(tamper);
    tamper_armed_ = static_cast<bool>(tamper_);
}
void FaultPlan::tamper(testing::Written what, std::span<std::byte> bytes) {
    if (!tamper_armed_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    if (tamper_) tamper_(what, bytes);
}
void FaultPlan::clear() {
    std::lock_guard lock(mutex_);
    tamper_ = {};
    tamper_armed_ = false;
    hwrm_.clear();
    rcfw_.clear();
    frame_drops_ = 0;
    cqe_rewrite_ = {};
    cqe_rewrites_ = 0;
    cqe_rewrite_armed_ = false;
}
std::optional<PlannedFault> FaultPlan::take_hwrm(std::uint16_t type) {
    std::lock_guard lock(mutex_);
    return take(hwrm_, type);
}
std::optional<PlannedFault> FaultPlan::take_rcfw(std::uint8_t op) {
    std::lock_guard lock(mutex_);
    return take(rcfw_, op);
}
bool FaultPlan::take_frame_drop() {
    unsigned left = frame_drops_.load(std::memory_order_relaxed);
    while (left > 0)
        if (frame_drops_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return true;
    return false;
}

}  // namespace detail

namespace testing {

using detail::FaultKind;
using detail::PlannedFault;

Faults::Faults(Model& nic) : impl_(nic.impl_.get()) {}

void Faults::refuse(hsi::ReqType type, hsi::HwrmError error, unsigned times) {
    impl_->faults.plan_hwrm(type, {FaultKind::refuse, static_cast<std::uint16_t>(error), times});
}
void Faults::drop(hsi::ReqType type, unsigned times) { impl_->faults.plan_hwrm(type, {FaultKind::drop, 0, times}); }
void Faults::stale(hsi::ReqType type, unsigned times) { impl_->faults.plan_hwrm(type, {FaultKind::stale, 0, times}); }
void Faults::truncate(hsi::ReqType type, unsigned times) {
    impl_->faults.plan_hwrm(type, {FaultKind::truncate, 0, times});
}
void Faults::refuse(hsi::Opcode opcode, hsi::RcfwStatus status, unsigned times) {
    impl_->faults.plan_rcfw(opcode, {FaultKind::refuse, static_cast<std::uint16_t>(status), times});
}
void Faults::drop(hsi::Opcode opcode, unsigned times) { impl_->faults.plan_rcfw(opcode, {FaultKind::drop, 0, times}); }
void Faults::stale(hsi::Opcode opcode, unsigned times) {
    impl_->faults.plan_rcfw(opcode, {FaultKind::stale, 0, times});
}
void Faults::drop_frames(unsigned count) { impl_->faults.plan_frame_drops(count); }
void Faults::receive(std::span<const std::byte> frame) {
    std::vector<detail::Frame> frames(1);
    frames[0].assign(frame.begin(), frame.end());
    impl_->deliver(frames, detail::Event::from_wire);
}
void Faults::rewrite_cqes(std::function<void(std::span<std::byte, 32>)> rewrite, unsigned times) {
    impl_->faults.plan_cqe_rewrite(std::move(rewrite), times);
}
void Faults::tamper(Tamper tamper) { impl_->faults.plan_tamper(std::move(tamper)); }
void Faults::clear() { impl_->faults.clear(); }

std::optional<std::uint32_t> icrc(std::span<const std::byte> frame) {
    detail::Frame copy(frame.begin(), frame.end());
    return detail::icrc(copy);
}
std::uint32_t crc32(std::span<const std::byte> bytes) { return detail::crc32(bytes); }
static_assert(static_cast<int>(Crc32Path::pclmulqdq) == static_cast<int>(detail::Crc32Path::pclmulqdq) &&
              static_cast<int>(Crc32Path::vpclmulqdq) == static_cast<int>(detail::Crc32Path::vpclmulqdq));
std::optional<std::uint32_t> crc32(std::span<const std::byte> bytes, Crc32Path path) {
    if (static_cast<int>(path) > static_cast<int>(detail::crc32_best())) return std::nullopt;
    return ~detail::crc32_update(~0u, bytes, static_cast<detail::Crc32Path>(path));
}
Crc32Path crc32_best() { return static_cast<Crc32Path>(detail::crc32_best()); }

Counters Faults::counters() const {
    std::lock_guard step_lock(impl_->step_mutex);
    std::lock_guard lock(impl_->inbox_mutex);
    return impl_->counters;
}

std::optional<hsi::QueryQpSb> Faults::query_qp(std::uint32_t qpn) const {
    std::lock_guard step_lock(impl_->step_mutex);
    return impl_->firmware.describe_qp(qpn);
}

std::optional<hsi::BackingStoreCfgRequest> Faults::backing_store() const {
    std::lock_guard step_lock(impl_->step_mutex);
    return impl_->firmware.backing_store();
}

std::optional<std::array<std::uint8_t, 16>> Faults::gid(std::uint16_t index) const {
    std::lock_guard step_lock(impl_->step_mutex);
    return impl_->firmware.gid(index);
}

}  // namespace testing
}  // namespace rig::bnxt::sim
