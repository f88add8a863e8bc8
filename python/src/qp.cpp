// rig.bnxt.Qp (rig/bnxt/qp.hpp). Python's send, send_inline, recv and read take keyword
// arguments (region, offset, bytes, id, signalled, immediate, solicited) and each posts
// one work request (Qp::post of a Send, Recv or Read).
#include <pybind11/stl.h>

#include "bnxt.hpp"
#include "rig/bnxt/gid.hpp"
#include "rig/bnxt/qp.hpp"

#include <unordered_set>
#include <vector>

namespace rig::python {
namespace {

// A queue pair and what it needs alive: its NIC and completion queues, and every region
// a post of it named, so that a region collected while its work is queued (a temporary
// passed to send or recv) is not deregistered under the NIC; they go with the queue pair.
// `mutex` lets one thread at a time post (qp.hpp) and keeps connect and destroy apart from
// posts. Members are destroyed last to first: the queue pair before what it uses.
struct Qp {
    std::shared_ptr<Nic> nic;
    std::shared_ptr<Cq> send_cq, recv_cq;
    std::vector<std::shared_ptr<Region>> posted;
    std::unordered_set<const Region*> posted_set;
    bnxt::Qp qp;
    std::mutex mutex;

    // Under mutex, after a post that queued work.
    bool hold(bool queued, const std::shared_ptr<Region>& region) {
        if (queued && posted_set.insert(region.get()).second) posted.push_back(region);
        return queued;
    }
};

std::string state_name(bnxt::QpState s) {
    switch (s) {
    case bnxt::QpState::Reset: return "RESET";
    case bnxt::QpState::Init: return "INIT";
    case bnxt::QpState::Rtr: return "RTR";
    case bnxt::QpState::Rts: return "RTS";
    case bnxt::QpState::Error: return "ERROR";
    }
    return "unknown";
}

bnxt::Mtu mtu_of(std::uint32_t bytes) {
    for (const auto m :
         {bnxt::Mtu::Mtu256, bnxt::Mtu::Mtu512, bnxt::Mtu::Mtu1024, bnxt::Mtu::Mtu2048, bnxt::Mtu::Mtu4096})
        if (bnxt::bytes(m) == bytes) return m;
    throw std::invalid_argument("mtu " + std::to_string(bytes) + ": 256, 512, 1024, 2048 or 4096 bytes");
}

// The bytes a post covers: `bytes`, or the region from `offset` to its end.
std::uint64_t length_of(const Region& r, std::uint64_t offset, const std::optional<std::uint64_t>& bytes) {
    if (bytes) return *bytes;
    if (offset > r.region.bytes())
        throw std::invalid_argument("offset " + std::to_string(offset) + " is past the region's " +
                                    std::to_string(r.region.bytes()) + " bytes");
    return r.region.bytes() - offset;
}

bnxt::Signal signal_of(bool signalled) { return signalled ? bnxt::Signal::Yes : bnxt::Signal::No; }
bnxt::Solicit solicit_of(bool solicited) { return solicited ? bnxt::Solicit::Yes : bnxt::Solicit::No; }

}  // namespace

void bind_qp(py::module_& m) {
    py::class_<bnxt::Endpoint>(m, "Endpoint",
                               "What a peer needs to connect to a queue pair: a plain value (Qp.endpoint()).")
        .def_readonly("qpn", &bnxt::Endpoint::qpn)
        .def_readonly("psn", &bnxt::Endpoint::psn)
        .def_property_readonly("gid", [](const bnxt::Endpoint& e) { return bnxt::to_string(e.gid); })
        .def_property_readonly("mac", [](const bnxt::Endpoint& e) { return bnxt::to_string(e.mac); })
        .def_property_readonly(
            "mtu", [](const bnxt::Endpoint& e) { return bnxt::bytes(e.mtu); }, "its port's largest path MTU, bytes")
        .def("__eq__", [](const bnxt::Endpoint& a, const bnxt::Endpoint& b) { return a == b; })
        .def("__repr__", [](const bnxt::Endpoint& e) {
            return "Endpoint(qpn=" + std::to_string(e.qpn) + ", psn=" + std::to_string(e.psn) + ", gid='" +
                   bnxt::to_string(e.gid) + "')";
        });

    py::class_<Qp, std::shared_ptr<Qp>>(
        m, "Qp",
        "A reliable-connected queue pair (rig/bnxt/qp.hpp). Posts never block: they return False "
        "where the queue is full and queue nothing. One thread at a time posts (others wait "
        "their turn); completion queues may be polled from other threads meanwhile. It keeps "
        "every region a post named until it is destroyed, so that a temporary region is not "
        "deregistered under queued work (an explicit Region.deregister still is).")
        .def_static(
            "create",
            [](const std::shared_ptr<Nic>& nic, const std::shared_ptr<Cq>& send_cq, std::shared_ptr<Cq> recv_cq,
               std::uint32_t send_depth, std::uint32_t recv_depth) {
                if (!recv_cq) recv_cq = send_cq;
                auto qp = must(unlocked([&] {
                    return bnxt::Qp::create(nic->nic, send_cq->cq, recv_cq->cq, bnxt::Depths{send_depth, recv_depth});
                }));
                return std::shared_ptr<Qp>(new Qp{nic, send_cq, recv_cq, {}, {}, std::move(qp), {}});
            },
            py::arg("nic"), py::arg("send_cq"), py::arg("recv_cq") = nullptr, py::arg("send_depth") = 128,
            py::arg("recv_depth") = 128,
            "An RC queue pair whose sends and reads complete on send_cq and receives on recv_cq (send_cq by default). "
            "rig.Error naming the NIC, or the command and status; ValueError for a depth of 0 or above the NIC's "
            "limit, Cqs of another NIC, or depths that would overflow a Cq.")
        .def(
            "endpoint", [](const Qp& s) { return s.qp.endpoint(); }, "This side's address for the peer.")
        .def(
            "connect",
            [](Qp& s, const bnxt::Endpoint& peer, const std::optional<std::uint32_t>& mtu, std::uint8_t timeout,
               std::uint8_t retry_cnt, std::uint8_t rnr_retry) {
                bnxt::Path path;
                if (mtu) path.mtu = mtu_of(*mtu);
                must(serialized(s.mutex, [&] {
                    return s.qp.connect(peer, bnxt::Retries{timeout, retry_cnt, rnr_retry}, path);
                }));
            },
            py::arg("peer"), py::arg("mtu") = py::none(), py::arg("timeout") = 14, py::arg("retry_cnt") = 7,
            py::arg("rnr_retry") = 7,
            "RESET to INIT to RTR to RTS towards peer (an Endpoint). mtu caps the path MTU (bytes); timeout is the ACK "
            "timeout, 4.096 us x 2^timeout; retry_cnt and rnr_retry as IBA's. rig.Error naming the command and status "
            "where the firmware refuses a step; ValueError if the queue pair is not in RESET.")
        .def(
            "send",
            [](Qp& s, const std::shared_ptr<Region>& region, std::uint64_t offset,
               const std::optional<std::uint64_t>& bytes, std::uint64_t id, bool signalled,
               const std::optional<std::uint32_t>& immediate, bool solicited) {
                const std::uint64_t n = length_of(*region, offset, bytes);
                return serialized(s.mutex, [&] {
                    return s.hold(s.qp.post(bnxt::Send{.region = &region->region,
                                                       .offset = offset,
                                                       .bytes = n,
                                                       .id = id,
                                                       .signalled = signal_of(signalled),
                                                       .immediate = immediate,
                                                       .solicited = solicit_of(solicited)}),
                                  region);
                });
            },
            py::arg("region"), py::arg("offset") = 0, py::arg("bytes") = py::none(), py::arg("id") = 0,
            py::arg("signalled") = true, py::arg("immediate") = py::none(), py::arg("solicited") = false,
            "Sends bytes bytes at offset of region (to its end by default), with immediate data where given. False if the "
            "send queue is full. ValueError if the bytes do not lie in the region, it is deregistered or of another NIC, "
            "or the queue pair is not connected.")
        .def(
            "send_inline",
            [](Qp& s, const py::buffer& data, std::uint64_t id, bool signalled,
               const std::optional<std::uint32_t>& immediate, bool solicited) {
                const py::buffer_info in = data.request();
                const std::span bytes(static_cast<const std::byte*>(in.ptr),
                                      static_cast<std::size_t>(in.size * in.itemsize));
                return serialized(s.mutex, [&] {
                    return s.qp.post(bnxt::Send{.id = id,
                                                .signalled = signal_of(signalled),
                                                .immediate = immediate,
                                                .solicited = solicit_of(solicited),
                                                .inline_data = bytes});
                });
            },
            py::arg("data"), py::arg("id") = 0, py::arg("signalled") = true, py::arg("immediate") = py::none(),
            py::arg("solicited") = false,
            "Sends data (a contiguous buffer), copied into the work request before it returns. ValueError if it is "
            "longer than the NIC's max_inline_data, and as send.")
        .def(
            "recv",
            [](Qp& s, const std::shared_ptr<Region>& region, std::uint64_t offset,
               const std::optional<std::uint64_t>& bytes, std::uint64_t id) {
                const std::uint64_t n = length_of(*region, offset, bytes);
                return serialized(s.mutex, [&] {
                    return s.hold(
                        s.qp.post(bnxt::Recv{.region = &region->region, .offset = offset, .bytes = n, .id = id}),
                        region);
                });
            },
            py::arg("region"), py::arg("offset") = 0, py::arg("bytes") = py::none(), py::arg("id") = 0,
            "Posts a receive of up to bytes bytes into offset of region (to its end by default); always signalled. False "
            "if the receive queue is full. As send, but allowed before connect.")
        .def(
            "read",
            [](Qp& s, const std::shared_ptr<Region>& region, const bnxt::Remote& remote, std::uint64_t offset,
               const std::optional<std::uint64_t>& bytes, std::uint64_t id, bool signalled) {
                const std::uint64_t n = length_of(*region, offset, bytes);
                return serialized(s.mutex, [&] {
                    return s.hold(s.qp.post(bnxt::Read{.region = &region->region,
                                                       .offset = offset,
                                                       .bytes = n,
                                                       .remote = remote,
                                                       .id = id,
                                                       .signalled = signal_of(signalled)}),
                                  region);
                });
            },
            py::arg("region"), py::arg("remote"), py::arg("offset") = 0, py::arg("bytes") = py::none(),
            py::arg("id") = 0, py::arg("signalled") = true,
            "RDMA READ of bytes bytes of the peer's region named by remote (Region.remote on its side) into offset of "
            "region. False if the send queue is full. As send.")
        .def(
            "destroy",
            [](Qp& s) {
                must(serialized(s.mutex, [&] { return s.qp.destroy(); }));
                s.posted_set.clear();
                s.posted.clear();  // with the GIL: a region may hold a Python object
            },
            "DESTROY_QP; no completion of it is reported afterwards, and it lets go of the regions its posts named. "
            "rig.Error naming the command and status.")
        .def_property_readonly(
            "state", [](const Qp& s) { return state_name(s.qp.state()); },
            "\"RESET\", \"INIT\", \"RTR\", \"RTS\" or \"ERROR\"")
        .def_property_readonly("qpn", [](const Qp& s) { return s.qp.qpn(); })
        .def_property_readonly(
            "path_mtu",
            [](const Qp& s) -> std::optional<std::uint32_t> {
                const auto mtu = s.qp.path_mtu();
                if (!mtu) return std::nullopt;
                return bnxt::bytes(*mtu);
            },
            "the path MTU in bytes once connected, else None")
        .def("__repr__", [](const Qp& s) {
            return "Qp(qpn=" + std::to_string(s.qp.qpn()) + ", " + state_name(s.qp.state()) + ")";
        });
}

}  // namespace rig::python
