// rig.Machine and what it answers: functions, routes (rig/pci/machine.hpp), the NIC ranking
// and pairing (rig/pci/nics.hpp), and `rig topo --json` as a dict (rig/pci/json.hpp).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <fmt/format.h>

#include "common.hpp"
#include "rig/pci/json.hpp"
#include "rig/pci/link.hpp"
#include "rig/pci/nics.hpp"
#include "rig/pci/routes.hpp"

namespace rig::python {
namespace {

py::object from_json(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

std::optional<std::string> distance_name(const std::optional<pci::Distance>& d) {
    if (!d) return std::nullopt;
    return std::string(pci::to_string(*d));
}

// GPU=NIC pins: a dict {gpu: nic}, or text "GPU=NIC, ..." as rig topo --pair takes it.
std::vector<pci::Override> overrides_of(const py::object& pairs) {
    if (pairs.is_none()) return {};
    std::string text;
    if (py::isinstance<py::dict>(pairs)) {
        for (auto [gpu, nic] : pairs.cast<py::dict>())
            text += py::str(gpu).cast<std::string>() + "=" + py::str(nic).cast<std::string>() + "\n";
    } else {
        text = pairs.cast<std::string>();
    }
    auto parsed = pci::parse_overrides(text);
    if (!parsed) throw std::invalid_argument("pairs: " + parsed.error());
    return std::move(*parsed);
}

pci::Routes routes_of(const Machine& m) {
    return must(unlocked([&] { return pci::Routes::read(m.machine); }));
}

}  // namespace

void bind_pci(py::module_& m) {
    py::class_<pci::Id>(m, "Function",
                        "A PCI function's identity: bus address, vendor and device IDs, 24-bit class code.")
        .def_readonly("bus", &pci::Id::bus, "its bus address, \"0000:41:00.0\"")
        .def_readonly("vendor", &pci::Id::vendor, "vendor ID, 0x14e4 for Broadcom")
        .def_readonly("device", &pci::Id::device, "device ID, assigned by its vendor")
        .def_readonly("class_code", &pci::Id::class_code, "24 bits: base class, subclass, programming interface")
        .def("__eq__", [](const pci::Id& a, const pci::Id& b) { return a == b; })
        .def("__repr__", [](const pci::Id& f) {
            return fmt::format("Function(bus='{}', vendor=0x{:04x}, device=0x{:04x}, class_code=0x{:06x})", f.bus,
                               f.vendor, f.device, f.class_code);
        });

    py::class_<pci::LinkState>(m, "LinkState", "A PCI Express link's speed and width (rig/pci/link.hpp).")
        .def_property_readonly(
            "generation", [](const pci::LinkState& s) { return static_cast<unsigned>(s.speed); },
            "1..6 (Gen4: 16 GT/s)")
        .def_readonly("width", &pci::LinkState::width, "lanes: 1, 2, 4, 8, 12, 16 or 32")
        .def_property_readonly("gigatransfers", [](const pci::LinkState& s) { return pci::gigatransfers(s.speed); })
        .def_property_readonly(
            "bytes_per_second", [](const pci::LinkState& s) { return pci::bytes_per_second(s); },
            "what it carries each way after line encoding")
        .def("__str__", [](const pci::LinkState& s) { return pci::to_string(s); })
        .def("__repr__", [](const pci::LinkState& s) { return "LinkState('" + pci::to_string(s) + "')"; });

    py::class_<pci::Redirect>(m, "Redirect", "A function on a route whose ACS Control redirects peer-to-peer requests.")
        .def_readonly("bus", &pci::Redirect::bus)
        .def_readonly("control", &pci::Redirect::control, "its ACS Control register; RR 0x4, CR 0x8, EC 0x20 redirect");

    py::class_<pci::RouteLink>(m, "RouteLink",
                               "One PCI Express link on a route: the function below it and the port above it.")
        .def_readonly("function", &pci::RouteLink::function)
        .def_readonly("port", &pci::RouteLink::port)
        .def_readonly("status", &pci::RouteLink::status, "LnkSta: the function's, else the port's; None: unknown")
        .def_readonly("capability", &pci::RouteLink::capability, "the function's LnkCap")
        .def_readonly("port_capability", &pci::RouteLink::port_capability, "the port's LnkCap")
        .def("capable", &pci::RouteLink::capable, "the fastest speed and widest width both ends can do")
        .def("downtrained", &pci::RouteLink::downtrained, "whether it trained below what both its ends can do");

    py::class_<pci::Route>(m, "Route",
                           "Why forwards and distance answered as they did (Machine.route): the verdict, the distance, "
                           "the bridges and rules consulted, the links crossed and their bottleneck.")
        .def_readonly("provider", &pci::Route::provider)
        .def_readonly("client", &pci::Route::client)
        .def_property_readonly(
            "verdict", [](const pci::Route& r) { return std::string(pci::to_string(r.verdict)); },
            "\"direct\", \"through host bridge\", \"not supported\" or \"unread\" (Linux's p2pdma map types)")
        .def_property_readonly(
            "distance", [](const pci::Route& r) { return distance_name(r.distance); },
            "\"switch\", \"bridge\", \"system\", or None where unread")
        .def_readonly("unread", &pci::Route::unread, "with verdict \"unread\": which function and why")
        .def_readonly("common", &pci::Route::common, "the nearest common upstream node, if any")
        .def_readonly("acs_read", &pci::Route::acs_read,
                      "False: configuration space past 64 bytes was unreadable (no CAP_SYS_ADMIN)")
        .def_readonly("redirects", &pci::Route::redirects, "every node on either leg that redirects")
        .def_readonly("provider_host_bridge", &pci::Route::provider_host_bridge)
        .def_readonly("client_host_bridge", &pci::Route::client_host_bridge)
        .def_readonly("cpu_rule", &pci::Route::cpu_rule, "AMD family >= 0x17 allowed it (cpu_supports_p2pdma)")
        .def_readonly("cpu", &pci::Route::cpu)
        .def_readonly("host_bridge_rule", &pci::Route::host_bridge_rule)
        .def_readonly("links", &pci::Route::links,
                      "every link the requests cross, provider up, then down to the client")
        .def_readonly("bottleneck", &pci::Route::bottleneck, "the slowest link's status, or None")
        .def_property_readonly("bottleneck_bytes_per_second", &pci::Route::bottleneck_bytes_per_second)
        .def("downtrained", &pci::Route::downtrained, "the links that trained below what both their ends can do")
        .def_property_readonly("forwards", &pci::Route::forwards,
                               "whether the client's requests reach the provider's BAR")
        .def("explain", &pci::Route::explain, "the whole explanation in a few lines, naming bridges and bits")
        .def("__repr__", [](const pci::Route& r) {
            return fmt::format("Route(provider='{}', client='{}', verdict='{}')", r.provider, r.client,
                               pci::to_string(r.verdict));
        });

    py::class_<pci::RankedNic>(m, "RankedNic", "One NIC of a ranking (rig/pci/nics.hpp), with what ranked it.")
        .def_readonly("nic", &pci::RankedNic::nic)
        .def_readonly("forwards", &pci::RankedNic::forwards)
        .def_property_readonly("distance", [](const pci::RankedNic& n) { return distance_name(n.distance); })
        .def_property_readonly(
            "numa", [](const pci::RankedNic& n) { return std::string(pci::to_string(n.numa)); },
            "\"same\", \"other\" or \"unknown\"")
        .def_readonly("numa_node", &pci::RankedNic::numa_node)
        .def_readonly("bottleneck", &pci::RankedNic::bottleneck)
        .def_readonly("bottleneck_bytes_per_second", &pci::RankedNic::bottleneck_bytes_per_second)
        .def_readonly("tie", &pci::RankedNic::tie)
        .def_readonly("common", &pci::RankedNic::common)
        .def_readonly("host_bridge", &pci::RankedNic::host_bridge)
        .def_readonly("why", &pci::RankedNic::why)
        .def("__repr__", [](const pci::RankedNic& n) { return "RankedNic('" + n.nic + "', '" + n.why + "')"; });

    py::class_<pci::Pairing>(m, "Pairing", "A GPU's NIC: its ranking, the NIC paired with it and why.")
        .def_readonly("gpu", &pci::Pairing::gpu)
        .def_readonly("ranked", &pci::Pairing::ranked)
        .def_readonly("nic", &pci::Pairing::nic, "the paired NIC; None where the machine has none")
        .def_readonly("overridden", &pci::Pairing::overridden)
        .def_readonly("why", &pci::Pairing::why)
        .def("__repr__",
             [](const pci::Pairing& p) { return "Pairing('" + p.gpu + "' -> '" + p.nic.value_or("none") + "')"; });

    py::class_<Machine>(m, "Machine",
                        "A computer whose PCI functions this process reaches (rig/pci/machine.hpp): this one (local), "
                        "a sysfs tree (at), or a simulated one (rig.sim.machines). Safe from several threads.")
        .def_static(
            "local",
            [] {
                return Machine{nullptr, pci::Machine::local()};
            },
            "This computer, read from /sys.")
        .def_static(
            "at",
            [](const std::filesystem::path& root) {
                return Machine{nullptr, pci::Machine::at(root)};
            },
            py::arg("root"),
            "The sysfs files under root (a `rig snapshot`, a test fixture): root/sys/bus/pci/devices, "
            "root/sys/devices, root/proc/cpuinfo. Nothing can be taken from it.")
        .def_property_readonly(
            "name", [](const Machine& s) { return s.machine.name(); }, "the transport's name, or None")
        .def_property_readonly(
            "page", [](const Machine& s) { return s.machine.page(); }, "the page size in bytes")
        .def(
            "functions", [](const Machine& s) { return must(s.machine.functions()); },
            "The functions in bus order. rig.Error where the directory cannot be listed or the transport failed.")
        .def(
            "forwards",
            [](const Machine& s, std::string_view p, std::string_view c) { return s.machine.forwards(p, c); },
            py::arg("provider"), py::arg("client"),
            "Whether the bus carries client's requests to a BAR of provider, as Linux's p2pdma decides. False if either is unread.")
        .def(
            "distance",
            [](const Machine& s, std::string_view a, std::string_view b) {
                return distance_name(s.machine.distance(a, b));
            },
            py::arg("a"), py::arg("b"), "\"switch\", \"bridge\" or \"system\"; None if either is unread.")
        .def(
            "route", [](const Machine& s, std::string_view p, std::string_view c) { return s.machine.route(p, c); },
            py::arg("provider"), py::arg("client"), "forwards and distance, explained (Route).")
        .def(
            "host_bridge_route",
            [](const Machine& s, std::string_view p, std::string_view c) { return s.machine.host_bridge_route(p, c); },
            py::arg("provider"), py::arg("client"),
            "The root complex's rule alone, as a request that reached it meets it.")
        .def(
            "rank_nics",
            [](const Machine& s, const std::string& bus) {
                const auto routes = routes_of(s);
                const auto at = routes.find(bus);
                if (!at) throw std::invalid_argument(bus + ": no such function of the machine");
                return pci::rank_nics(routes, *at);
            },
            py::arg("bus"),
            "The machine's NICs ranked for the function at bus, best first (rig/pci/nics.hpp). ValueError for no such function.")
        .def(
            "pair_nics",
            [](const Machine& s, const py::object& pairs) {
                const auto overrides = overrides_of(pairs);
                return must(pci::pair_nics(routes_of(s), overrides));
            },
            py::arg("pairs") = py::none(),
            "Every GPU with its NIC (Pairing), pairs pinning GPUs to NICs ({gpu: nic} or \"GPU=NIC,...\"). "
            "rig.Error naming an override the machine refuses; ValueError for one that is no GPU=NIC.")
        .def(
            "topo",
            [](const Machine& s, const py::object& pairs) {
                const auto overrides = overrides_of(pairs);
                return from_json(must(unlocked([&] { return pci::topo_json(s.machine, overrides); })));
            },
            py::arg("pairs") = py::none(),
            "What `rig topo --json` prints, as a dict: functions (the endpoints), pairs (distance and forwards of each "
            "ordered pair), nics (each GPU's ranking and pair). rig.Error where the machine cannot be read.")
        .def(
            "ls", [](const Machine& s) { return from_json(must(unlocked([&] { return pci::ls_json(s.machine); }))); },
            "What `rig ls --json` prints, as a dict.")
        .def("__repr__", [](const Machine& s) {
            if (auto n = s.machine.name()) return "Machine('" + *n + "')";
            if (auto r = s.machine.root()) return "Machine.at('" + r->string() + "')";
            return std::string("Machine()");
        });
}

}  // namespace rig::python
