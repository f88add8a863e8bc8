// Random topologies for property tests (tests/pci): host bridges with or without a root
// complex, root ports, switches up to two deep, SR-IOV PFs with VFs and RCiEPs, each
// port's ACS drawn from a few settings, a CPU of four kinds; one seed, one topology.
#pragma once

#include <map>
#include <optional>
#include <random>

#include "rig/sim/topology.hpp"

namespace rig::test {

using sim::Cpu;
using sim::FunctionRef;
using sim::Spec;
using sim::Topology;

// The host-bridge and root-port IDs the generator draws, with the allow-list's word on
// them: nullopt not listed, true listed with REQ_SAME_HOST_BRIDGE, false listed.
inline const std::map<std::uint16_t, std::optional<bool>> listed = {
    {0x2020, false}, {0x09a2, false}, {0x2030, false}, {0x2f00, true}, {0x6f00, std::nullopt}, {0x6f02, std::nullopt}};

class Generator {
public:
    explicit Generator(unsigned seed) : random_(seed) {}

    Topology build() {
        const Cpu cpus[] = {Cpu::intel(), Cpu::amd(0x17), Cpu::amd(0x15), Cpu::hygon()};
        Topology t(cpus[pick(4)]);
        const std::uint8_t roots[] = {0x00, 0x40, 0x80};
        const unsigned hosts = 1 + pick(3);
        for (unsigned i = 0; i < hosts; ++i) {
            const auto h = t.host_bridge(0, roots[i]);
            const std::uint16_t complexes[] = {0x2020, 0x2f00, 0x6f00, 0x09a2};
            if (pick(5) != 0) t.add(h, Spec::root_complex(0x8086, complexes[pick(4)]));
            const unsigned ports = 1 + pick(2);
            for (unsigned p = 0; p < ports; ++p) {
                const std::uint16_t ids[] = {0x2030, 0x6f02};
                const auto rp =
                    t.add(h, Spec::root_port(static_cast<std::uint8_t>(1 + p), 0, 0x8086, ids[pick(2)], acs()));
                below(t, rp, 0);
            }
            if (pick(4) == 0) t.add(h, endpoint(0x10, 0));  // an RCiEP
        }
        return t;
    }

private:
    unsigned pick(unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(random_); }
    std::optional<std::uint16_t> acs() {
        const std::optional<std::uint16_t> choices[] = {std::nullopt, 0x0000, 0x001d, 0x0020, 0x0011};
        return choices[pick(5)];
    }
    Spec endpoint(std::uint8_t device, std::uint8_t function) {
        auto s = Spec::endpoint(device, function, 0x10de, 0x2335, 0x030200);
        s.acs_control = acs();
        return s;
    }
    void below(Topology& t, FunctionRef port, int depth) {
        switch (depth < 2 ? pick(3) : 0) {
        case 0:  // one device of one or two functions
            t.add(port, endpoint(0, 0));
            if (pick(2)) t.add(port, endpoint(0, 1));
            break;
        case 1: {  // a switch
            auto usp_spec = Spec::upstream_port(0x10b5, 0x8747);
            usp_spec.acs_control = acs();
            const auto usp = t.add(port, usp_spec);
            const unsigned downstream = 1 + pick(3);
            for (unsigned d = 0; d < downstream; ++d)
                below(t, t.add(usp, Spec::downstream_port(static_cast<std::uint8_t>(d), 0x10b5, 0x8747, acs())),
                      depth + 1);
            break;
        }
        default: {  // an SR-IOV PF with VFs
            const auto pf = t.add(port, endpoint(0, 0));
            const unsigned vfs = 1 + pick(2);
            for (unsigned v = 0; v < vfs; ++v) t.add_vf(pf, endpoint(1, static_cast<std::uint8_t>(v)));
        }
        }
    }
    std::mt19937 random_;
};

}  // namespace rig::test
