// write_case_trees DIR: writes each case machine of tests/pci/cases (cases.hpp, all()) as a
// sysfs tree under DIR/<case file's name>, replacing what is there; the Python tests
// (tests/python/test_topology.py) read them with rig.Machine.at and `rig topo --root`.
// Exit status 0 done, 1 a tree could not be written (the reason on stderr), 2 no DIR.
#include <filesystem>
#include <iostream>

#include "cases.hpp"
#include "rig/sim/fixture.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: write_case_trees DIR\n";
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    for (const auto& c : rig::test::cases::all()) {
        const auto root = dir / c.name;
        std::filesystem::remove_all(root);
        std::filesystem::create_directories(root);
        if (auto written = rig::sim::write_sysfs(c.topology, root); !written) {
            std::cerr << "write_case_trees: " << root.string() << ": " << written.error() << '\n';
            return 1;
        }
    }
    return 0;
}
