// The rig module: rig (PCI machines, routes, topology), rig.sim (the simulated machines),
// rig.gpu (GPUs and their memory, DLPack), rig.bnxt (the bnxt NIC: regions, completion
// queues, queue pairs). python/rig/__init__.py makes each submodule importable.
#include "common.hpp"

namespace rig::python {

bool same_machine(const Machine& a, const Machine& b) {
    return a.keep == b.keep && a.machine.name() == b.machine.name() && a.machine.root() == b.machine.root();
}

}  // namespace rig::python

PYBIND11_MODULE(_rig, m) {
    using namespace rig::python;
    m.doc() = "rig: moves data between GPUs and RDMA NICs over PCI Express (the C++ library's Python module)";
    // Every rig::Result error; std::invalid_argument is ValueError (pybind11's own translation).
    py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
    m.attr("Error").attr("__doc__") =
        "A runtime failure the library reports (rig::Result), with its message: it names the thing and what failed, "
        "as \"0000:41:00.0: the firmware refused REGISTER_MR (status 4)\". Misuse raises ValueError instead.";
    bind_pci(m);
    auto sim = m.def_submodule(
        "sim", "Simulated machines: two computers with a GPU and a bnxt NIC each, cabled (rig/sim/pair.hpp)");
    bind_sim(sim);
    auto gpu = m.def_submodule("gpu", "GPUs and their memory (rig/gpu/gpu.hpp); Memory exports DLPack");
    bind_gpu(gpu);
    auto bnxt = m.def_submodule("bnxt", "The Broadcom bnxt RoCE NIC driven from user space (rig/bnxt/*.hpp)");
    bind_bnxt(bnxt);
    bind_qp(bnxt);
}
