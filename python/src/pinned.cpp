// Pinned (pinned.hpp): a Python object's bytes, checked and held.
#include "pinned.hpp"

#include <dlpack/dlpack.h>

#include <cstdio>
#include <stdexcept>

namespace rig::python {
namespace {

std::string hex(std::uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

std::string device_name(int type, int id) {
    switch (type) {
    case kDLCPU: return "CPU";
    case kDLCUDA: return "CUDA device " + std::to_string(id);
    case kDLCUDAHost: return "CUDA host memory";
    case kDLROCM: return "ROCm device " + std::to_string(id);
    case kDLROCMHost: return "ROCm host memory";
    default: return "DLPack device type " + std::to_string(type) + " id " + std::to_string(id);
    }
}

std::string tuple_text(const std::int64_t* v, int n) {
    std::string s = "(";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (n == 1 ? ",)" : ")");
}

// C order: each dimension's stride is the product of the sizes after it (a dimension of
// size 1 may have any stride); no strides means C order (DLPack 0.6).
bool c_contiguous(const DLTensor& t) {
    if (t.strides == nullptr) return true;
    std::int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
        if (t.shape[i] != 1 && t.strides[i] != expected) return false;
        expected *= t.shape[i];
    }
    return true;
}

}  // namespace

std::unique_ptr<Pinned> Pinned::of(const py::object& object, std::uint64_t page, const std::string& what) {
    std::unique_ptr<Pinned> p(new Pinned());
    p->object_ = object;
    std::byte* data = nullptr;
    std::uint64_t bytes = 0;
    if (py::hasattr(object, "__dlpack__") && py::hasattr(object, "__dlpack_device__")) {
        const auto device = object.attr("__dlpack_device__")().cast<py::tuple>();
        const int type = device[0].cast<int>(), id = device[1].cast<int>();
        if (type != kDLCPU && type != kDLCUDAHost && type != kDLROCMHost)
            throw std::invalid_argument(
                what + ": the tensor is on " + device_name(type, id) +
                ": the NIC pins memory of this process (DLPack kDLCPU); register GPU memory with Region.device");
        py::capsule capsule = object.attr("__dlpack__")();
        auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
        if (tensor == nullptr) throw py::error_already_set();
        PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ours now: the deleter runs in ~Pinned
        p->tensor_ = tensor;
        const DLTensor& t = tensor->dl_tensor;
        if (!c_contiguous(t))
            throw std::invalid_argument(what + ": the tensor is not contiguous: shape " + tuple_text(t.shape, t.ndim) +
                                        ", strides " + tuple_text(t.strides, t.ndim) +
                                        " (in elements); register a contiguous tensor (.contiguous())");
        std::uint64_t elements = 1;
        for (int i = 0; i < t.ndim; ++i) elements *= static_cast<std::uint64_t>(t.shape[i]);
        bytes = elements * ((t.dtype.bits * t.dtype.lanes + 7) / 8);
        data = static_cast<std::byte*>(t.data) + t.byte_offset;
    } else if (PyObject_CheckBuffer(object.ptr())) {
        if (PyObject_GetBuffer(object.ptr(), &p->view_, PyBUF_WRITABLE | PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
            PyErr_Clear();
            throw std::invalid_argument(
                what + ": the buffer is not writable: the NIC writes the region's bytes (receives, reads)");
        }
        p->has_view_ = true;
        if (!PyBuffer_IsContiguous(&p->view_, 'C')) {
            std::string shape = "(", strides = "(";
            for (int i = 0; i < p->view_.ndim; ++i) {
                shape += (i ? ", " : "") + std::to_string(p->view_.shape[i]);
                strides += (i ? ", " : "") + std::to_string(p->view_.strides[i]);
            }
            throw std::invalid_argument(what + ": the buffer is not contiguous: shape " + shape + "), strides " +
                                        strides + ") (in bytes)");
        }
        bytes = static_cast<std::uint64_t>(p->view_.len);
        data = static_cast<std::byte*>(p->view_.buf);
    } else {
        throw py::type_error(what + ": " + py::str(py::type::of(object)).cast<std::string>() +
                             " offers neither DLPack (__dlpack__) nor the buffer protocol");
    }
    if (bytes == 0) throw std::invalid_argument(what + ": the object holds 0 bytes");
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    if (page != 0 && address % page != 0)
        throw std::invalid_argument(what + ": its " + std::to_string(bytes) + " bytes start at " + hex(address) +
                                    ", not on a " + std::to_string(page) + "-byte page (misaligned by " +
                                    std::to_string(address % page) + " bytes)");
    p->bytes_ = std::span<std::byte>(data, bytes);
    return p;
}

Pinned::~Pinned() {
    if (has_view_) PyBuffer_Release(&view_);
    if (tensor_ != nullptr && tensor_->deleter != nullptr) tensor_->deleter(tensor_);
}

}  // namespace rig::python
