// rig: shows a machine's PCI functions and the peer-to-peer routes between them, and
// snapshots them for replay elsewhere.
//
//   rig ls [--root DIR] [--json]
//   rig topo [--root DIR] [--json] [--why PROVIDER CLIENT]
//   rig snapshot [--root DIR] OUT_DIR
//
// --root reads a snapshot (or any sysfs tree) instead of this machine's /sys and /proc.
// Exit status: 0 done; 1 the machine could not be read, --root is no such tree, --why names
// no function of it, or OUT_DIR is not empty; 2 a usage error (CLI11's message, a bus
// address that is none, or an empty --root or OUT_DIR).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "rig/pci/address.hpp"
#include "rig/pci/snapshot.hpp"

int main(int argc, char** argv) {
    using namespace rig;
    CLI::App app{"rig: PCI functions and peer-to-peer routes of a machine"};
    app.require_subcommand(1);
    std::string root;
    bool json = false;

    auto* ls = app.add_subcommand("ls", "every PCI function: bus address, ids, class, driver, NUMA node, IOMMU group");
    ls->add_option("--root", root, "read the sysfs tree under DIR (a rig snapshot) instead of this machine");
    ls->add_flag("--json", json, "print JSON");

    auto* topo = app.add_subcommand("topo", "distance and peer-to-peer matrices of the endpoints");
    topo->add_option("--root", root, "read the sysfs tree under DIR (a rig snapshot) instead of this machine");
    auto* topo_json = topo->add_flag("--json", json, "print JSON");
    std::vector<std::string> pair;
    topo->add_option("--why", pair, "explain the route from CLIENT's requests to a BAR of PROVIDER (text only)")
        ->expected(2)
        ->type_name("PROVIDER CLIENT")
        ->excludes(topo_json);

    auto* snap = app.add_subcommand("snapshot", "copy what routes need into OUT_DIR, for rig topo --root elsewhere");
    snap->add_option("--root", root, "snapshot the sysfs tree under DIR instead of this machine");
    std::string out_dir;
    snap->add_option("OUT_DIR", out_dir, "where to write the snapshot: a new or empty directory")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help is a ParseError whose code is 0
    }
    // An empty --root or OUT_DIR names nothing: not this machine, not the current directory.
    for (auto* sub : {ls, topo, snap})
        if (sub->parsed() && sub->count("--root") > 0 && root.empty()) {
            std::cerr << "rig: --root \"\": an empty path names no tree (leave --root out to read this machine)\n";
            return 2;
        }
    if (snap->parsed() && out_dir.empty()) {
        std::cerr << "rig: snapshot: OUT_DIR \"\": an empty path names no directory\n";
        return 2;
    }
    if (!root.empty())
        if (auto tree = pci::check_tree(root); !tree) {
            std::cerr << "rig: " << tree.error() << '\n';
            return 1;
        }
    const pci::Machine machine = root.empty() ? pci::Machine::local() : pci::Machine::at(root);

    if (ls->parsed()) return tool::ls(machine, json, std::cout, std::cerr);
    if (topo->parsed()) {
        if (pair.empty()) return tool::topo(machine, json, std::cout, std::cerr);
        const auto provider = pci::normalize_address(pair[0]);
        const auto client = pci::normalize_address(pair[1]);
        for (const auto& [given, parsed] : {std::pair{pair[0], provider}, std::pair{pair[1], client}})
            if (!parsed) {
                std::cerr << fmt::format("rig: \"{}\" is not a bus address (DDDD:BB:DD.F or BB:DD.F)\n", given);
                return 2;
            }
        return tool::why(machine, *provider, *client, std::cout, std::cerr);
    }
    if (snap->parsed()) {
        const auto written = pci::snapshot(machine, out_dir);
        if (!written) {
            std::cerr << "rig: " << written.error() << '\n';
            return 1;
        }
        std::cout << "rig: wrote a snapshot to " << out_dir << "; read it with rig topo --root " << out_dir << '\n';
        return 0;
    }
    return 0;
}
