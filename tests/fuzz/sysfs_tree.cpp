// libFuzzer harness: hostile sysfs trees under --root (rig/pci/machine.hpp Machine::at,
// rig/pci/snapshot.hpp) and the snapshot's promise. The input's first byte picks one of
// eight random topologies (tests/support/random_topology.hpp), written as sysfs; each
// following 5 bytes is one change to it: a config byte, a config length, an ID file's
// bytes, a file replaced by a link (out of the root, to /dev/zero, to a directory), a
// device entry made a directory or a dangling link or a link to another function, a
// physfn link, a FIFO, cpuinfo's text, a stray device directory on a root bus. Then
// every reader runs (functions, describe, describe_cpu, route and distance), a snapshot
// is taken, and its copy must answer as the tree: the same functions and files, and for
// each pair read the same verdict, distance and forwards; else a trap.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/random_topology.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/snapshot.hpp"
#include "rig/sim/fixture.hpp"

namespace {

namespace fs = std::filesystem;
using rig::pci::Machine;

// A directory of this process's, removed when it exits.
struct Scratch {
    fs::path path;
    Scratch() {
        // tmpfs where there is one: every input writes and copies a tree.
        std::error_code ec;
        const fs::path tmp = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
        std::string pattern = (tmp / "rig-fuzz-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) __builtin_trap();
        path = pattern;
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

const fs::path& scratch() {
    static const Scratch s;
    return s.path;
}

void write(const fs::path& file, const std::string& bytes) {
    std::error_code ec;
    fs::remove(file, ec);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// One change, from 5 bytes, to the tree at `root` whose functions are `buses`.
void change(const fs::path& root, const std::vector<std::string>& buses, const std::uint8_t* op) {
    static const char* const files[] = {"vendor",    "device", "class",  "config",
                                        "numa_node", "physfn", "driver", "iommu_group"};
    static const char* const targets[] = {
        "/proc/self/status", "/dev/zero", "..", "config", "/", "../../../../../../../../etc/hostname",
        "/sys/devices",      "vendor"};
    std::error_code ec;
    const std::string& bus = buses[op[1] % buses.size()];
    const fs::path entry = root / "sys/bus/pci/devices" / bus;
    const fs::path dir = fs::canonical(entry, ec);
    if (ec) return;  // changed before
    const unsigned a = op[2], b = op[3], c = op[4];
    const fs::path file = dir / files[a % 8];
    switch (op[0] % 10) {
    case 0: {  // a byte of config
        std::string config;
        {
            std::ifstream in(dir / "config", std::ios::binary);
            config.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
        const std::size_t at = (a | b << 8) % 4096;
        if (config.size() <= at) config.resize(at + 1, '\0');
        config[at] = static_cast<char>(c);
        write(dir / "config", config);
        break;
    }
    case 1: fs::resize_file(dir / "config", (a | b << 8) % 4200, ec); break;
    case 2:
        write(dir / files[a % 3],
              std::string("0x") + "0123456789abcdefx\n "[b % 19] + "0123456789abcdef\n"[c % 17] + "\n");
        break;
    case 3: write(dir / files[a % 5], std::string{static_cast<char>(b), static_cast<char>(c)}); break;
    case 4:
        fs::remove(file, ec);
        fs::create_symlink(targets[b % 8], file, ec);
        break;
    case 5:
        fs::remove(entry, ec);
        if (b % 3 == 0) {
            fs::create_directory(entry, ec);
            for (const char* name : {"vendor", "device", "class", "config"})
                fs::copy_file(dir / name, entry / name, ec);
        } else if (b % 3 == 1) {
            fs::create_symlink("../../../devices/pci0000:00/0000:00:1f.7", entry, ec);
        } else {
            fs::create_symlink(fs::canonical(root / "sys/bus/pci/devices" / buses[c % buses.size()], ec), entry, ec);
        }
        break;
    case 6:
        fs::remove(dir / "physfn", ec);
        fs::create_symlink(
            b % 2 ? fs::path("../nowhere") : fs::canonical(root / "sys/bus/pci/devices" / buses[c % buses.size()], ec),
            dir / "physfn", ec);
        break;
    case 7:
        fs::remove(file, ec);
        ::mkfifo(file.c_str(), 0600);
        break;
    case 8: {
        std::string text = "processor\t: 0\nvendor_id\t: ";
        text += b % 2 ? "AuthenticAMD" : "GenuineIntel";
        text += "\ncpu family\t: " + std::to_string(c) + "\n";
        if (a % 3 == 0) text.push_back(static_cast<char>(c));
        write(root / "proc/cpuinfo", a % 5 == 0 ? std::string(a, static_cast<char>(b)) : text);
        break;
    }
    default: {  // a stray device directory beside the first device of a root bus
        fs::path host = dir;
        while (!host.empty() && host.filename().string().rfind("pci", 0) != 0 && host != root)
            host = host.parent_path();
        if (host == root || host.empty()) break;
        const fs::path stray = host / (host.filename().string().substr(3) + ":" + "0123456789abcdef"[b % 16] + "0.0");
        fs::create_directories(stray, ec);
        fs::copy_file(dir / "config", stray / "config", fs::copy_options::overwrite_existing, ec);
        if (c % 2) write(stray / "class", "0x060400\n");
    }
    }
}

bool same(const rig::pci::Route& x, const rig::pci::Route& y) {
    return x.verdict == y.verdict && x.distance == y.distance && x.forwards() == y.forwards() &&
           x.cpu_rule == y.cpu_rule && x.redirects.size() == y.redirects.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 1 + 5 * 64) return -1;
    const rig::sim::Topology t = rig::test::Generator(1 + data[0] % 8).build();
    const fs::path root = scratch() / "tree", copy = scratch() / "copy";
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::remove_all(copy, ec);
    if (!rig::sim::write_sysfs(t, root)) __builtin_trap();
    std::vector<std::string> buses;
    for (std::size_t i = 0; i < t.functions().size(); ++i) buses.push_back(t.bus(rig::sim::FunctionRef{i}));
    for (std::size_t at = 1; at + 5 <= size; at += 5) change(root, buses, data + at);

    const Machine tree = Machine::at(root);
    const auto listed = tree.functions();
    const auto files = rig::pci::describe(tree);
    (void)rig::pci::describe_cpu(tree);
    if (!rig::pci::snapshot(tree, copy)) return 0;  // a tree it cannot copy says so
    const Machine copied = Machine::at(copy);
    const auto listed_copy = copied.functions();
    const auto files_copy = rig::pci::describe(copied);
    if (listed.has_value() != listed_copy.has_value() || files.has_value() != files_copy.has_value()) __builtin_trap();
    if (listed && listed->size() != listed_copy->size()) __builtin_trap();
    if (files) {
        if (files->size() != files_copy->size()) __builtin_trap();
        for (std::size_t i = 0; i < files->size(); ++i) {
            const auto &x = (*files)[i], &y = (*files_copy)[i];
            if (x.id.bus != y.id.bus || x.id.class_code != y.id.class_code || x.host_bridge != y.host_bridge ||
                x.upstream != y.upstream || x.driver != y.driver || x.iommu_group != y.iommu_group ||
                x.physfn != y.physfn || x.numa_node != y.numa_node || x.buses != y.buses || x.config != y.config ||
                x.unread.empty() != y.unread.empty())
                __builtin_trap();
        }
    }
    // Each function with its neighbour in bus order, and one pair the input picks (every
    // pair, as tests/pci/snapshot_test.cpp checks, costs seconds an input here).
    for (std::size_t i = 0; i <= buses.size(); ++i) {
        const std::size_t from = i < buses.size() ? i : data[0] / 8 % buses.size();
        const std::string &p = buses[from],
                          &c = buses[(from + 1 + (i < buses.size() ? 0 : data[size - 1])) % buses.size()];
        if (!same(tree.route(p, c), copied.route(p, c))) __builtin_trap();
    }
    return 0;
}
