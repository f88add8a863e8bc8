// rig.gpu's objects as the other binding sources see them: bnxt.cpp registers a Memory's
// runs (Region.device) and pins a HostMemory's pages (Region.pages).
#pragma once

#include <atomic>
#include <memory>

#include "common.hpp"
#include "rig/gpu/gpu.hpp"

namespace rig::python {

// rig.gpu.Gpu: a GPU opened on a machine.
// Members are destroyed last to first: what keeps a thing alive comes before it.
struct Gpu {
    Machine machine;
    gpu::Gpu gpu;
};

// rig.gpu.Memory: memory a Gpu allocated. One per allocation, shared by the Python object
// and every DLPack tensor exported from it (exports counts those alive).
struct Memory {
    Gpu gpu;
    gpu::Memory memory;
    std::atomic<int> exports{0};
};

// rig.gpu.HostMemory: host memory pinned for a GPU's copy engine (Gpu.host).
struct HostMemory {
    Gpu gpu;
    gpu::HostMemory memory;
};

}  // namespace rig::python
