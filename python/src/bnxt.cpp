// rig.bnxt: Nic (rig/bnxt/nic.hpp), Region (region.hpp), Cq and Completion (cq.hpp). The
// queue pair and its posts are in qp.cpp.
#include "bnxt.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <vector>

#include "rig/bnxt/gid.hpp"

namespace rig::python {
namespace {

// A completion's status: the spec's word and the CQE's status byte.
struct CompletionStatus {
    std::string name;  // "OK", "REMOTE_ACCESS_ERR", "WORK_REQUEST_FLUSHED_ERR"
    int code = 0;      // the CQE's status byte as the NIC wrote it (0 for a driver flush)
};

std::string kind_name(bnxt::RegionKind k) {
    switch (k) {
    case bnxt::RegionKind::Host: return "host";
    case bnxt::RegionKind::Pages: return "pages";
    case bnxt::RegionKind::Device: return "device";
    }
    return "unknown";
}

std::string machine_name(const Machine& m) {
    if (auto n = m.machine.name()) return "machine " + *n;
    if (auto r = m.machine.root()) return "the machine at " + r->string();
    return "this machine";
}

std::shared_ptr<Region> made(bnxt::Region region, const std::shared_ptr<Nic>& nic) {
    return std::shared_ptr<Region>(new Region{nullptr, nullptr, nullptr, nic, std::move(region)});
}

std::uint64_t length_of(const Region& r, std::uint64_t offset, const std::optional<std::uint64_t>& bytes) {
    if (bytes) return *bytes;
    if (offset > r.region.bytes())
        throw std::invalid_argument("offset " + std::to_string(offset) + " is past the region's " +
                                    std::to_string(r.region.bytes()) + " bytes");
    return r.region.bytes() - offset;
}

py::list completions(std::span<const bnxt::Completion> done) {
    py::list out;
    for (const bnxt::Completion& c : done) out.append(c);
    return out;
}

}  // namespace

void bind_bnxt(py::module_& m) {
    py::class_<Nic, std::shared_ptr<Nic>>(
        m, "Nic",
        "A Broadcom bnxt RoCE function driven from user space (rig/bnxt/nic.hpp). Closed by "
        "close(), or when it and everything made on it are gone. Errors name its bus address, "
        "the firmware command and status.")
        .def_static(
            "open",
            [](const Machine& machine, const std::string& bus, const std::string& address) {
                bnxt::Options options;
                options.address = address;
                auto nic = must(unlocked([&] { return bnxt::Nic::open(machine.machine, bus, options); }));
                return std::shared_ptr<Nic>(new Nic{machine, std::move(nic)});
            },
            py::arg("machine"), py::arg("bus"), py::arg("address") = "",
            "Takes, resets and brings up the NIC at bus of machine. address: the port's IP address (numeric); "
            "empty: one of RFC 5737's documentation block. rig.Error naming the bus where it cannot be taken, is no "
            "bnxt RoCE function, or the firmware refuses; ValueError where bus is not a bus address.")
        .def(
            "close", [](Nic& s) { must(unlocked([&] { return s.nic.close(); })); },
            "Tears down (queue pairs, regions, completion queues, then the NIC) and gives the function back; their "
            "calls raise ValueError afterwards. Must not run while another thread uses the NIC.")
        .def_property_readonly("closed", [](const Nic& s) { return s.nic.closed(); })
        .def_property_readonly("bus", [](const Nic& s) { return s.nic.bus(); })
        .def_readonly("machine", &Nic::machine)
        .def_property_readonly("mac", [](const Nic& s) { return bnxt::to_string(s.nic.mac()); })
        .def_property_readonly("gid", [](const Nic& s) { return bnxt::to_string(s.nic.gid()); })
        .def_property_readonly(
            "mtu", [](const Nic& s) { return bnxt::bytes(s.nic.mtu()); },
            "the largest path MTU its port carries, in bytes")
        .def_property_readonly("firmware", [](const Nic& s) { return s.nic.firmware(); })
        .def("__repr__", [](const Nic& s) { return "Nic('" + s.nic.bus() + "')"; });

    py::class_<bnxt::Remote>(m, "Remote", "A peer's bytes: Region.remote(offset) on the peer's side, for Qp.read.")
        .def(py::init([](std::uint64_t address, std::uint32_t rkey) {
                 return bnxt::Remote{address, rkey};
             }),
             py::arg("address"), py::arg("rkey"))
        .def_readonly("address", &bnxt::Remote::address)
        .def_readonly("rkey", &bnxt::Remote::rkey)
        .def("__repr__", [](const bnxt::Remote& r) {
            return "Remote(address=" + std::to_string(r.address) + ", rkey=" + std::to_string(r.rkey) + ")";
        });

    py::class_<Region, std::shared_ptr<Region>>(
        m, "Region",
        "Memory a NIC reads and writes (rig/bnxt/region.hpp): host (new memory of the NIC's "
        "machine), pages (a Python object's bytes, kept alive until deregistered), device "
        "(GPU memory by its BAR runs). Deregistered by deregister(), or when the last "
        "reference goes.")
        .def_static(
            "host",
            [](const std::shared_ptr<Nic>& nic, std::uint64_t bytes) {
                return made(must(unlocked([&] { return bnxt::Region::host(nic->nic, bytes); })), nic);
            },
            py::arg("nic"), py::arg("bytes"),
            "A region over bytes bytes (rounded up to the page) of new zeroed memory, which read and write reach. "
            "rig.Error naming the NIC and the size, or the command and status; ValueError for 0 bytes.")
        .def_static(
            "pages",
            [](const std::shared_ptr<Nic>& nic, const py::object& object) {
                auto pinned = Pinned::of(object, nic->nic.function().machine().page(), "Region.pages");
                std::shared_ptr<HostMemory> host;
                if (py::isinstance<HostMemory>(object)) host = object.cast<std::shared_ptr<HostMemory>>();
                const auto bytes = pinned->bytes();
                auto r = made(must(unlocked([&] { return bnxt::Region::pages(nic->nic, bytes); })), nic);
                r->pinned = std::move(pinned);
                r->host_memory = std::move(host);
                return r;
            },
            py::arg("nic"), py::arg("object"),
            "A region over the bytes of object: a DLPack producer (torch, numpy, rig.gpu.HostMemory) or a writable "
            "buffer (bytearray, memoryview, mmap). They must be contiguous, of this process (kDLCPU) and start on a "
            "page, else ValueError naming which. The region keeps object alive until it is deregistered. rig.Error "
            "where the machine cannot pin them or, on a NIC without an IOMMU, they are not its DMA memory.")
        .def_static(
            "device",
            [](const std::shared_ptr<Nic>& nic, const std::shared_ptr<Memory>& memory, std::uint64_t offset,
               const std::optional<std::uint64_t>& bytes) {
                if (!same_machine(memory->gpu.machine, nic->machine))
                    throw std::invalid_argument("Region.device: the memory of GPU " + memory->memory.gpu() + " is on " +
                                                machine_name(memory->gpu.machine) + ", the NIC " + nic->nic.bus() +
                                                " on " + machine_name(nic->machine) +
                                                ": a NIC reaches GPU memory of its own machine only");
                const std::uint64_t n =
                    bytes ? *bytes : memory->memory.bytes() - std::min(offset, memory->memory.bytes());
                auto r = made(must(unlocked([&]() -> Result<bnxt::Region> {
                                  auto runs = memory->memory.runs(offset, n);
                                  if (!runs) return std::unexpected(std::move(runs).error());
                                  return bnxt::Region::device(nic->nic, runs->runs);
                              })),
                              nic);
                r->memory = memory;
                return r;
            },
            py::arg("nic"), py::arg("memory"), py::arg("offset") = 0, py::arg("bytes") = py::none(),
            "A region over GPU memory's bus address runs (rig.gpu.Memory.runs) of bytes [offset, offset + bytes) (all "
            "of it by default), peer-to-peer: decided by Linux's rule on the route from the NIC to the GPU's BAR. The "
            "region starts at offset's 4096-byte page: memory byte offset is region byte offset % 4096. rig.Error naming the NIC, the run and the route's "
            "explanation where the bus does not carry the NIC's requests there; ValueError for memory of another "
            "machine or a range outside the memory.")
        .def(
            "read",
            [](const Region& s, std::uint64_t offset, const std::optional<std::uint64_t>& bytes,
               const py::object& out) -> py::object {
                if (!out.is_none()) {
                    auto pinned = Pinned::of(out, 0, "Region.read");
                    s.region.read(offset, pinned->bytes());
                    return out;
                }
                std::string text(length_of(s, offset, bytes), '\0');
                s.region.read(offset, std::as_writable_bytes(std::span(text)));
                return py::bytes(text);
            },
            py::arg("offset") = 0, py::arg("bytes") = py::none(), py::arg("out") = py::none(),
            "The bytes at offset of a host region: as bytes (bytes of them; to the end by default), or written into out "
            "(a writable contiguous buffer or CPU tensor, filled whole), which is returned. ValueError for bytes outside "
            "the region, a region that is not of host, or one deregistered.")
        .def(
            "write",
            [](const Region& s, std::uint64_t offset, const py::buffer& data) {
                const py::buffer_info in = data.request();
                if (!PyBuffer_IsContiguous(in.view(), 'C'))
                    throw std::invalid_argument("Region.write: the data is not contiguous");
                s.region.write(offset, std::span(static_cast<const std::byte*>(in.ptr),
                                                 static_cast<std::size_t>(in.size * in.itemsize)));
            },
            py::arg("offset"), py::arg("data"),
            "Writes data (a contiguous buffer) at offset of a host region. As read.")
        .def(
            "deregister",
            [](Region& s) {
                must(unlocked([&] { return s.region.deregister(); }));
                s.pinned.reset();  // the NIC reaches the object's bytes no more
                s.memory.reset();
                s.host_memory.reset();
            },
            "Deregisters the region and lets go of what it kept alive. rig.Error naming the command and status where the "
            "firmware refuses: the object stays held then, as the NIC may still reach it. Again: nothing.")
        .def_property_readonly(
            "kind", [](const Region& s) { return kind_name(s.region.kind()); }, "\"host\", \"pages\" or \"device\"")
        .def_property_readonly("bytes", [](const Region& s) { return s.region.bytes(); })
        .def_property_readonly("lkey", [](const Region& s) { return s.region.lkey(); })
        .def_property_readonly("rkey", [](const Region& s) { return s.region.rkey(); })
        .def_property_readonly(
            "address", [](const Region& s) { return s.region.address(); }, "where a peer's Remote names byte 0")
        .def_property_readonly("deregistered", [](const Region& s) { return s.region.deregistered(); })
        .def_property_readonly(
            "object",
            [](const Region& s) -> py::object {
                if (s.memory) return py::cast(s.memory);
                if (s.host_memory) return py::cast(s.host_memory);
                return py::none();
            },
            "the rig.gpu.Memory or HostMemory it keeps alive, if any")
        .def(
            "remote", [](const Region& s, std::uint64_t offset) { return s.region.remote(offset); },
            py::arg("offset") = 0, "The peer's name for the byte at offset (Remote). ValueError past the region.")
        .def("__repr__", [](const Region& s) {
            return "Region(" + kind_name(s.region.kind()) + ", " + std::to_string(s.region.bytes()) + " bytes, lkey " +
                   std::to_string(s.region.lkey()) + ", NIC " + s.nic->nic.bus() + ")";
        });

    py::class_<CompletionStatus>(m, "CompletionStatus",
                                 "A completion's status: the spec's name and the CQE's status byte.")
        .def_readonly("name", &CompletionStatus::name,
                      "\"OK\", \"REMOTE_ACCESS_ERR\", \"WORK_REQUEST_FLUSHED_ERR\", ...")
        .def_readonly("code", &CompletionStatus::code, "the CQE's status byte (0 for a flush by the driver)")
        .def("__eq__",
             [](const CompletionStatus& s, const py::object& other) {
                 if (py::isinstance<py::str>(other)) return s.name == other.cast<std::string>();
                 if (py::isinstance<CompletionStatus>(other)) return s.name == other.cast<CompletionStatus>().name;
                 return false;
             })
        .def("__hash__", [](const CompletionStatus& s) { return py::hash(py::str(s.name)); })
        .def("__str__", [](const CompletionStatus& s) { return s.name; })
        .def("__repr__", [](const CompletionStatus& s) {
            return "CompletionStatus('" + s.name + "', code=" + std::to_string(s.code) + ")";
        });

    py::class_<bnxt::Completion>(m, "Completion", "One completed work request (rig/bnxt/cq.hpp).")
        .def_readonly("id", &bnxt::Completion::id, "the id the work request was posted with")
        .def_property_readonly(
            "op", [](const bnxt::Completion& c) { return std::string(bnxt::to_string(c.op)); },
            "\"send\", \"read\" or \"recv\"")
        .def_property_readonly("status",
                               [](const bnxt::Completion& c) {
                                   return CompletionStatus{std::string(bnxt::to_string(c.status)), c.code};
                               })
        .def_property_readonly("ok", &bnxt::Completion::ok)
        .def_readonly("bytes", &bnxt::Completion::bytes, "send, read: the bytes posted; receive: the bytes received")
        .def_readonly("immediate", &bnxt::Completion::immediate, "a receive's immediate data, or None")
        .def_readonly("qpn", &bnxt::Completion::qpn, "the queue pair it belongs to")
        .def("__repr__", [](const bnxt::Completion& c) {
            return "Completion(id=" + std::to_string(c.id) + ", op=" + std::string(bnxt::to_string(c.op)) +
                   ", status=" + std::string(bnxt::to_string(c.status)) + ", bytes=" + std::to_string(c.bytes) +
                   (c.immediate ? ", immediate=" + std::to_string(*c.immediate) : std::string()) + ")";
        });

    py::class_<Cq, std::shared_ptr<Cq>>(
        m, "Cq",
        "A completion queue (rig/bnxt/cq.hpp). One thread at a time polls or waits (others wait "
        "their turn, without the GIL); queue pairs may post from other threads meanwhile.")
        .def_static(
            "create",
            [](const std::shared_ptr<Nic>& nic, std::uint32_t depth) {
                auto cq = must(unlocked([&] { return bnxt::Cq::create(nic->nic, depth); }));
                return std::shared_ptr<Cq>(new Cq{nic, std::move(cq), {}});
            },
            py::arg("nic"), py::arg("depth"),
            "A completion queue of at least depth completions. rig.Error naming the NIC, or the command and status; "
            "ValueError for a depth of 0 or above the NIC's limit.")
        .def(
            "poll",
            [](Cq& s, std::size_t max) {
                std::vector<bnxt::Completion> done(max);
                const std::size_t n = serialized(s.mutex, [&] { return s.cq.poll(done); });
                return completions(std::span(done).first(n));
            },
            py::arg("max") = 16, "Up to max completions, oldest first, without waiting (a list, maybe empty).")
        .def(
            "wait",
            [](Cq& s, double timeout, std::size_t max, const std::string& notify) {
                if (notify != "any" && notify != "solicited")
                    throw std::invalid_argument("notify \"" + notify + "\": \"any\" or \"solicited\"");
                std::vector<bnxt::Completion> done(max);
                const auto how = notify == "any" ? bnxt::Notify::Any : bnxt::Notify::Solicited;
                const auto wait =
                    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(timeout));
                const std::size_t n = must(serialized(s.mutex, [&] { return s.cq.wait(done, wait, how); }));
                return completions(std::span(done).first(n));
            },
            py::arg("timeout") = 1.0, py::arg("max") = 16, py::arg("notify") = "any",
            "As poll, but waits up to timeout seconds (the GIL released) for the first completion: an empty list when it "
            "passed. notify=\"solicited\" wakes only for a solicited receive or an error. rig.Error naming the NIC where "
            "it can no longer be reached, or the CQ and the CQE where the NIC wrote an invalid one.")
        .def(
            "destroy", [](Cq& s) { must(serialized(s.mutex, [&] { return s.cq.destroy(); })); },
            "DESTROY_CQ. rig.Error naming the command and status (as while a queue pair still uses it).")
        .def_property_readonly("depth", [](const Cq& s) { return s.cq.depth(); })
        .def_property_readonly("id", [](const Cq& s) { return s.cq.id(); })
        .def_property_readonly(
            "error", [](const Cq& s) { return s.cq.error(); }, "the invalid CQE the NIC wrote, once it did; else None");
}

}  // namespace rig::python
