// rig: shows a machine's PCI functions and the peer-to-peer routes between them, and
// snapshots them for replay elsewhere.
//
//   rig ls [--root DIR] [--json]
//   rig topo [--root DIR] [--json] [--all] [--pair GPU=NIC ...] [--pairs FILE] [--why PROVIDER CLIENT]
//   rig snapshot [--root DIR] OUT_DIR
//
// --root reads a snapshot (or any sysfs tree) instead of this machine's /sys and /proc.
// Exit status: 0 done; 1 the machine could not be read, --root is no such tree, --why or an
// override names no function of it (or an override's NIC is none), or OUT_DIR is not
// empty; 2 a usage error (CLI11's message, a bus address that is none, an override that is
// no GPU=NIC, or an empty --root or OUT_DIR).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>

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
    topo->add_flag("--json", json, "print JSON");
    bool all = false;
    topo->add_flag("--all", all, "the matrices of every endpoint, not only the GPUs' and NICs'");
    std::vector<std::string> pins;
    topo->add_option("--pair", pins, "pin a GPU to a NIC in the pairing (GPU=NIC; repeat, or separate with commas)")
        ->type_name("GPU=NIC");
    std::string pins_file;
    topo->add_option("--pairs", pins_file, "pin GPUs to NICs as FILE lists them: GPU=NIC entries, # comments")
        ->type_name("FILE");
    std::vector<std::string> pair;
    topo->add_option(
            "--why", pair,
            "explain the route from CLIENT's requests to a BAR of PROVIDER: the rule, the links and the bottleneck")
        ->expected(2)
        ->type_name("PROVIDER CLIENT");

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
        if (pair.empty()) {
            std::string text;
            for (const auto& p : pins) text += p + "\n";
            if (!pins_file.empty()) {
                std::ifstream in(pins_file);
                if (!in) {
                    std::cerr << "rig: --pairs " << pins_file << ": cannot open\n";
                    return 2;
                }
                text += std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            }
            const auto overrides = pci::parse_overrides(text);
            if (!overrides) {
                std::cerr << "rig: --pair: " << overrides.error() << '\n';
                return 2;
            }
            return tool::topo(machine, json, all, *overrides, std::cout, std::cerr);
        }
        const auto provider = pci::normalize_address(pair[0]);
        const auto client = pci::normalize_address(pair[1]);
        for (const auto& [given, parsed] : {std::pair{pair[0], provider}, std::pair{pair[1], client}})
            if (!parsed) {
                std::cerr << fmt::format("rig: \"{}\" is not a bus address (DDDD:BB:DD.F or BB:DD.F)\n", given);
                return 2;
            }
        return tool::why(machine, *provider, *client, json, std::cout, std::cerr);
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
