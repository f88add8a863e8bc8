// rig.gpu: Space, Gpu, Memory (rig/gpu/gpu.hpp), the simulated GPU's open (rig/gpu/sim.hpp),
// and Memory's DLPack export (DLPack 0.6: __dlpack__, __dlpack_device__), zero-copy, a 1-D
// uint8 tensor over Memory::pointer() whose capsule keeps the memory alive.
#include "gpu.hpp"

#include <dlpack/dlpack.h>
#include <pybind11/stl.h>

#include "rig/gpu/sim.hpp"
#include "rig/space.hpp"

namespace rig::python {
namespace {

// The GPU vendor's address space: 1 TiB from 64 GiB on, as p2p_copy places it.
constexpr std::int64_t space_base = std::int64_t{0x10} << 32;
constexpr std::int64_t space_bytes = std::int64_t{1} << 40;

std::string hex(std::uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

DLDevice device_of(const gpu::Pointer& p) {
    switch (p.device) {
    case gpu::Pointer::Device::Host: return {kDLCPU, 0};
    case gpu::Pointer::Device::Cuda: return {kDLCUDA, p.ordinal};
    case gpu::Pointer::Device::Rocm: return {kDLROCM, p.ordinal};
    }
    return {kDLCPU, 0};
}

// What a DLPack tensor of a Memory holds: the memory (so it stays while the tensor does)
// and the shape and strides the tensor points to.
struct Export {
    std::shared_ptr<Memory> memory;
    std::int64_t shape[1];
    std::int64_t strides[1] = {1};
    DLManagedTensor tensor{};
};

// The DLPack deleter: the consumer calls it when its tensor goes, perhaps without the GIL,
// so it touches no Python object.
void release(DLManagedTensor* tensor) {
    auto* e = static_cast<Export*>(tensor->manager_ctx);
    e->memory->exports.fetch_sub(1);
    delete e;
}

// A capsule no consumer took (still named "dltensor") frees its tensor itself.
void capsule_gone(PyObject* capsule) {
    if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // consumed: "used_dltensor"
    auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (tensor && tensor->deleter) tensor->deleter(tensor);
}

py::capsule dlpack(const std::shared_ptr<Memory>& m, const py::object& stream) {
    if (!stream.is_none() && !py::isinstance<py::int_>(stream))
        throw py::type_error("__dlpack__: stream must be None or an int (a CUDA or HIP stream handle)");
    // rig's copies, fills and checksums are done when they return, so the consumer's
    // stream has nothing to wait for: any stream is honoured as it is.
    const gpu::Pointer p = must(m->memory.pointer());
    auto e = std::make_unique<Export>();
    e->memory = m;
    e->shape[0] = static_cast<std::int64_t>(m->memory.bytes());
    DLTensor& t = e->tensor.dl_tensor;
    t.data = p.data;
    t.device = device_of(p);
    t.ndim = 1;
    t.dtype = {kDLUInt, 8, 1};
    t.shape = e->shape;
    t.strides = e->strides;
    t.byte_offset = 0;
    e->tensor.manager_ctx = e.get();
    e->tensor.deleter = release;
    m->exports.fetch_add(1);
    Export* raw = e.release();
    PyObject* capsule = PyCapsule_New(&raw->tensor, "dltensor", capsule_gone);
    if (!capsule) {
        release(&raw->tensor);
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::capsule>(capsule);
}

std::uint64_t span_of(const Memory& m, std::uint64_t offset, const std::optional<std::uint64_t>& bytes) {
    if (bytes) return *bytes;
    if (offset > m.memory.bytes())
        throw std::invalid_argument("offset " + std::to_string(offset) + " is past the memory's " +
                                    std::to_string(m.memory.bytes()) + " bytes");
    return m.memory.bytes() - offset;
}

}  // namespace

void bind_gpu(py::module_& m) {
    py::class_<Space, std::shared_ptr<Space>>(
        m, "Space",
        "The virtual address space the GPUs of one vendor share (rig/space.hpp): an "
        "address means the same memory on every GPU that maps it.")
        .def(py::init<std::int64_t, std::int64_t>(), py::arg("base") = space_base, py::arg("bytes") = space_bytes,
             "[base, base + bytes) of addresses; 1 TiB from 64 GiB on by default.");

    py::class_<gpu::Runs>(
        m, "Runs", "Bus address runs of GPU memory, page-rounded: what a NIC registers (Region.device) to reach it.")
        .def_property_readonly(
            "runs",
            [](const gpu::Runs& r) {
                std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
                for (const pci::Run& run : r.runs) out.emplace_back(run.address.value, run.bytes);
                return out;
            },
            "[(bus address, bytes), ...] in order, each a multiple of 4096")
        .def_readonly("offset", &gpu::Runs::offset, "where the range's first byte lies in the first run (< 4096)");

    py::class_<Memory, std::shared_ptr<Memory>>(
        m, "Memory",
        "GPU memory at an address of its vendor's Space (Gpu.alloc). Exports itself "
        "zero-copy through DLPack: torch.from_dlpack(memory), numpy.from_dlpack(memory) "
        "see its bytes as a 1-D uint8 tensor, which keeps the memory alive.")
        .def_property_readonly(
            "address", [](const Memory& s) { return s.memory.address(); }, "its first address in the Space")
        .def_property_readonly(
            "bytes", [](const Memory& s) { return s.memory.bytes(); }, "its size in bytes, as alloc was asked")
        .def_property_readonly(
            "gpu", [](const Memory& s) { return s.memory.gpu(); }, "the GPU that allocated it, for messages")
        .def(
            "runs",
            [](const Memory& s, std::uint64_t offset, const std::optional<std::uint64_t>& bytes) {
                return must(s.memory.runs(offset, span_of(s, offset, bytes)));
            },
            py::arg("offset") = 0, py::arg("bytes") = py::none(),
            "The bus address runs of bytes [offset, offset + bytes) (all of it by default), on its GPU's bus. rig.Error "
            "for bytes past the GPU's BAR (with the sizes); ValueError for a range outside the memory or freed memory.")
        .def_property_readonly(
            "data_ptr", [](const Memory& s) { return reinterpret_cast<std::uintptr_t>(must(s.memory.pointer()).data); },
            "Where the process addresses its first byte (what an exported tensor's data pointer is).")
        .def("__dlpack__", &dlpack, py::arg("stream") = py::none(),
             "DLPack 0.6: a capsule of a 1-D uint8 tensor over all its bytes, zero-copy: kDLCPU for the simulated GPU "
             "(its memory is this process's), kDLCUDA or kDLROCM with the device ordinal for CUDA and HIP. rig's GPU "
             "calls are complete when they return, so any stream is honoured. The tensor keeps the memory alive; "
             "Gpu.free refuses while one lives. rig.Error where the process sees no one range of it.")
        .def(
            "__dlpack_device__",
            [](const Memory& s) {
                const DLDevice d = device_of(must(s.memory.pointer()));
                return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
            },
            "(device type, device id) as DLPack numbers them: (1, 0) kDLCPU for the simulated GPU.")
        .def("__repr__", [](const Memory& s) {
            return "Memory(" + std::to_string(s.memory.bytes()) + " bytes at " +
                   hex(static_cast<std::uint64_t>(s.memory.address())) + " of " + s.memory.gpu() + ")";
        });

    py::class_<HostMemory, std::shared_ptr<HostMemory>>(
        m, "HostMemory", py::buffer_protocol(),
        "Host memory a GPU's driver pinned for its copy engine (Gpu.host), "
        "on a page; a writable buffer (memoryview(host)) and what "
        "Region.pages takes for the bounce path.")
        .def_property_readonly("bytes", [](const HostMemory& s) { return s.memory.size(); })
        .def_buffer([](HostMemory& s) {
            const pci::Window& w = s.memory.buffer().window;
            if (!w.is_mapped()) throw std::invalid_argument("HostMemory: not mapped into this process");
            return py::buffer_info(w.data(), 1, py::format_descriptor<std::uint8_t>::format(),
                                   static_cast<py::ssize_t>(w.size()));
        });

    py::class_<Gpu>(
        m, "Gpu",
        "A GPU (rig/gpu/gpu.hpp) allocating memory at addresses of its vendor's Space. Every call may come from "
        "several threads; those that run on the GPU release the GIL.")
        .def_static(
            "open",
            [](const Machine& machine, const std::string& bus, std::shared_ptr<Space> space) {
                if (!space) space = std::make_shared<Space>(space_base, space_bytes);
                auto g = must(unlocked([&] { return gpu::sim::open(machine.machine, bus, space); }));
                return Gpu{machine, std::move(g)};
            },
            py::arg("machine"), py::arg("bus"), py::arg("space") = py::none(),
            "The simulated GPU at bus of machine, taken and reset, allocating in space (a new Space by default; "
            "give GPUs that map each other's memory one Space). rig.Error naming the bus where it cannot be "
            "taken or is not the simulated GPU; ValueError where bus is not a bus address.")
        .def_property_readonly("name", [](const Gpu& s) { return s.gpu.name(); })
        .def_property_readonly("bus", [](const Gpu& s) { return s.gpu.bus(); })
        .def_readonly("machine", &Gpu::machine)
        .def(
            "alloc",
            [](const Gpu& s, std::uint64_t bytes) {
                auto memory = must(unlocked([&] { return s.gpu.alloc(bytes); }));
                return std::shared_ptr<Memory>(new Memory{s, std::move(memory), {}});
            },
            py::arg("bytes"),
            "bytes bytes of its memory, reachable through its memory BAR, contents undefined. rig.Error naming the GPU "
            "and the size when out of memory; ValueError for 0 bytes.")
        .def(
            "free",
            [](const Gpu& s, const std::shared_ptr<Memory>& memory) {
                if (const int n = memory->exports.load(); n > 0)
                    throw Error(s.gpu.name() + " " + s.gpu.bus() + ": the " + std::to_string(memory->memory.bytes()) +
                                " bytes at " + hex(static_cast<std::uint64_t>(memory->memory.address())) +
                                " are viewed by " + std::to_string(n) + " DLPack tensor(s): drop them first");
                must(unlocked([&] { return s.gpu.free(memory->memory); }));
            },
            py::arg("memory"),
            "Gives the memory back. rig.Error, and nothing given back, while a NIC region covers any of its bytes "
            "(naming the region, its NIC and the bus addresses) or a DLPack tensor views it. Freeing again does nothing.")
        .def(
            "close", [](const Gpu& s) { must(unlocked([&] { return s.gpu.close(); })); },
            "Frees all its memory, as free does; alloc raises ValueError afterwards.")
        .def(
            "host",
            [](const Gpu& s, std::uint64_t bytes) {
                auto memory = must(unlocked([&] { return s.gpu.host(bytes); }));
                return std::shared_ptr<HostMemory>(new HostMemory{s, std::move(memory)});
            },
            py::arg("bytes"), "At least bytes bytes of host memory pinned for its copy engine (HostMemory).")
        .def(
            "fill",
            [](const Gpu& s, const Memory& memory, std::uint64_t seed, std::uint64_t offset,
               const std::optional<std::uint64_t>& bytes) {
                const std::uint64_t n = span_of(memory, offset, bytes);
                must(unlocked([&] { return s.gpu.fill(memory.memory, offset, n, seed); }));
            },
            py::arg("memory"), py::arg("seed"), py::arg("offset") = 0, py::arg("bytes") = py::none(),
            "Writes the fill pattern of seed (rig/gpu/pattern.hpp) over [offset, offset + bytes), on the GPU.")
        .def(
            "checksum",
            [](const Gpu& s, const Memory& memory, std::uint64_t offset, const std::optional<std::uint64_t>& bytes) {
                const std::uint64_t n = span_of(memory, offset, bytes);
                return must(unlocked([&] { return s.gpu.checksum(memory.memory, offset, n); }));
            },
            py::arg("memory"), py::arg("offset") = 0, py::arg("bytes") = py::none(),
            "The checksum (rig/gpu/pattern.hpp) of [offset, offset + bytes), computed on the GPU.")
        .def(
            "upload",
            [](const Gpu& s, const Memory& memory, std::uint64_t offset, const py::buffer& data) {
                const py::buffer_info in = data.request();
                const std::span<const std::byte> bytes(static_cast<const std::byte*>(in.ptr),
                                                       static_cast<std::size_t>(in.size * in.itemsize));
                must(unlocked([&] { return s.gpu.upload(memory.memory, offset, bytes); }));
            },
            py::arg("memory"), py::arg("offset"), py::arg("data"),
            "Copies data (any contiguous buffer) into the memory at offset.")
        .def(
            "download",
            [](const Gpu& s, const Memory& memory, std::uint64_t offset, std::uint64_t bytes) {
                std::string out(bytes, '\0');
                must(unlocked(
                    [&] { return s.gpu.download(memory.memory, offset, std::as_writable_bytes(std::span(out))); }));
                return py::bytes(out);
            },
            py::arg("memory"), py::arg("offset"), py::arg("bytes"), "bytes bytes of the memory from offset on.")
        .def("__repr__", [](const Gpu& s) { return "Gpu('" + s.gpu.bus() + "', '" + s.gpu.name() + "')"; });
}

}  // namespace rig::python
