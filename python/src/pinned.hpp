// The bytes of a Python object that Region.pages pins: a DLPack producer's (torch, numpy,
// rig's own) or a buffer-protocol object's (bytearray, numpy, mmap, HostMemory), held
// with the object until the region is deregistered, so that a temporary cannot be
// collected under a live registration (prime-rl#2326).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

struct DLManagedTensor;

namespace rig::python {

namespace py = pybind11;

class Pinned {
public:
    // The bytes of `object`, checked before anything is registered: ValueError naming what
    // is wrong where they are not on this process's memory (a DLPack device other than
    // kDLCPU, kDLCUDAHost or kDLROCMHost), not contiguous (with the shape and strides), not
    // writable, empty, or (with page > 0) not starting on a `page`-byte page (with the
    // address); TypeError where the object offers neither DLPack nor a buffer. `what`
    // begins each message ("Region.pages").
    static std::unique_ptr<Pinned> of(const py::object& object, std::uint64_t page, const std::string& what);
    ~Pinned();  // with the GIL held
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;

    std::span<std::byte> bytes() const { return bytes_; }

private:
    Pinned() = default;
    py::object object_;
    Py_buffer view_{};
    bool has_view_ = false;
    DLManagedTensor* tensor_ = nullptr;
    std::span<std::byte> bytes_;
};

}  // namespace rig::python
