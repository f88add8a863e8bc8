// What every binding source of the rig module shares: how a rig::Result becomes a value or
// rig.Error, what keeps a simulated machine alive under the objects made on it, and how a
// call that waits lets go of the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::python {

namespace py = pybind11;

// rig.Error (a RuntimeError): a rig::Result's error, with the library's message.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

template <class T>
T must(Result<T> r) {
    if (!r) throw Error(r.error());
    return std::move(*r);
}
inline void must(Result<void> r) {
    if (!r) throw Error(r.error());
}

// Whatever must outlive an object made on a machine: a simulated pair's systems and models
// (rig/sim/pair.hpp), or nothing for Machine.local() and Machine.at().
using Keep = std::shared_ptr<const void>;

// rig.Machine: a pci::Machine and what keeps it reachable (destroyed after it).
struct Machine {
    Keep keep;
    pci::Machine machine;
};

// Whether a and b are the same machine: kept alive by the same thing (one simulated pair,
// or nothing), with the same transport name and sysfs root.
bool same_machine(const Machine& a, const Machine& b);

// Runs f with the GIL released: for every call that waits (firmware commands, polls with
// a timeout, copies on the GPU).
template <class F>
decltype(auto) unlocked(F&& f) {
    py::gil_scoped_release release;
    return std::forward<F>(f)();
}

// Runs f under `mutex` with the GIL released while it waits for the mutex and runs: the
// queue pair's and completion queue's "one thread at a time" (qp.hpp, cq.hpp), kept for
// Python's threads.
template <class F>
decltype(auto) serialized(std::mutex& mutex, F&& f) {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex);
    return std::forward<F>(f)();
}

void bind_pci(py::module_& m);
void bind_sim(py::module_& m);
void bind_gpu(py::module_& m);
void bind_bnxt(py::module_& m);
void bind_qp(py::module_& bnxt);

}  // namespace rig::python
