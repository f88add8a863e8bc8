// rig.bnxt's objects as qp.cpp sees them.
#pragma once

#include <memory>
#include <mutex>

#include "common.hpp"
#include "gpu.hpp"
#include "pinned.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/region.hpp"

namespace rig::python {

// rig.bnxt.Nic. Closed by close() or when the last object made on it goes.
// Members are destroyed last to first: what keeps a thing alive comes before it.
struct Nic {
    Machine machine;
    bnxt::Nic nic;
};

// rig.bnxt.Region, and what it keeps alive until it is deregistered: the Python object
// whose bytes it pins (pages), or the GPU memory whose runs it covers (device).
struct Region {
    std::unique_ptr<Pinned> pinned;  // released after the region: declared first
    std::shared_ptr<Memory> memory;
    std::shared_ptr<HostMemory> host_memory;
    std::shared_ptr<Nic> nic;
    bnxt::Region region;
};

// rig.bnxt.Cq; `mutex` lets one thread at a time poll or wait (cq.hpp).
struct Cq {
    std::shared_ptr<Nic> nic;
    bnxt::Cq cq;
    std::mutex mutex;
};

}  // namespace rig::python
