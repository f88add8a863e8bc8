// The Wire (wire.hpp): a link both Nics hold; a frame crosses it under the link's mutex
// into the peer's inbox.
#include "rig/bnxt/sim/wire.hpp"

#include <stdexcept>

#include "impl.hpp"

namespace rig::bnxt::sim {

Wire::Wire(Nic& a, Nic& b) : link_(std::make_shared<Link>()) {
    if (&a == &b) throw std::invalid_argument("bnxt Wire: both ends are the same NIC");
    Nic::Impl* ends[2] = {a.impl_.get(), b.impl_.get()};
    std::scoped_lock plugs(ends[0]->link_mutex, ends[1]->link_mutex);
    for (auto* e : ends) {
        if (!e->link) continue;
        std::lock_guard l(e->link->mutex);
        if (e->link->ends[e->link_end] == e) throw std::invalid_argument("bnxt Wire: a NIC is plugged already");
    }
    std::lock_guard l(link_->mutex);
    for (unsigned i = 0; i < 2; ++i) {
        ends[i]->link = link_;
        ends[i]->link_end = i;
        link_->ends[i] = ends[i];
    }
}

Wire::~Wire() {
    std::lock_guard l(link_->mutex);
    link_->ends = {};
}

}  // namespace rig::bnxt::sim
