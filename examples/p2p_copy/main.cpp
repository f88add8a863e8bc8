// p2p_copy: moves a buffer from GPU memory on one machine into GPU memory on another,
// peer-to-peer (NIC to GPU BAR) and through host memory (bounce), on two simulated
// machines, and prints what ran, why, how fast, and whether the bytes arrived intact.
//
//   p2p_copy [--size 256M] [--path both|auto|p2p|bounce] [--pull]
//            [--topology switch|acs|two-host-bridges|iommu|DIR [--gpu BUS --nic BUS]]
//            [--cable wire|udp] [--pcap FILE] [--loss P] [--json]
//
// Exit status: 0 when at least one path ran and every path that ran was verified (and a
// path chosen alone with --path p2p or --path bounce was not refused); 1 otherwise; 2 for
// a command line it cannot use.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>

#include "copy.hpp"
#include "machines.hpp"
#include "report.hpp"
#include "rig/pci/snapshot.hpp"
#include "rig/text.hpp"
#include "topologies.hpp"

namespace {

using namespace p2p_copy;

// "256M", "4k", "1G", "4096", "64MiB": bytes, with binary K/M/G suffixes.
std::optional<std::uint64_t> parse_size(std::string_view s) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (error != std::errc() || end == s.data()) return std::nullopt;
    std::string suffix(end, s.data() + s.size());
    for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static const std::map<std::string, unsigned> shifts{{"", 0},    {"B", 0},   {"K", 10},   {"KB", 10}, {"KIB", 10},
                                                        {"M", 20},  {"MB", 20}, {"MIB", 20}, {"G", 30},  {"GB", 30},
                                                        {"GIB", 30}};
    const auto shift = shifts.find(suffix);
    if (shift == shifts.end() || value == 0 || value > (std::uint64_t{1} << 40) >> shift->second) return std::nullopt;
    return value << shift->second;
}

// The GPU's memory: a power of two that holds the buffer, at least 64 MiB.
std::uint64_t gpu_memory_for(std::uint64_t size) { return std::bit_ceil(std::max<std::uint64_t>(size, std::uint64_t{64} << 20)); }

// The memory this process may still take (MemAvailable of /proc/meminfo); nullopt where
// the kernel does not say.
std::optional<std::uint64_t> available_memory() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return std::nullopt;
}

int run(int argc, char** argv) {
    CLI::App app{"Moves a buffer from GPU memory on one simulated machine into GPU memory on another, "
                 "peer-to-peer and through host memory, and verifies it."};
    std::string size_text = "256M", path = "both", topology = "switch", gpu, nic;
    bool pull = false, as_json = false;
    app.add_option("--size", size_text, "bytes to move, with K, M or G (binary) suffixes")->capture_default_str();
    app.add_option("--path", path, "which paths: both, auto (p2p where the bus forwards and the NICs take their GPUs' BARs, else bounce), p2p, bounce")
        ->check(CLI::IsMember({"both", "auto", "p2p", "bounce"}))
        ->capture_default_str();
    app.add_flag("--pull", pull, "RDMA READ: the receiver reads the sender's GPU region (p2p) or host region (bounce)");
    app.add_option("--topology", topology,
                   "switch, acs, two-host-bridges, iommu, or a directory `rig snapshot` wrote (with --gpu and --nic)")
        ->capture_default_str();
    app.add_option("--gpu", gpu, "with --topology DIR: the bus address of the GPU the simulated GPU replaces");
    app.add_option("--nic", nic, "with --topology DIR: the bus address of the NIC the simulated bnxt NIC replaces");
    std::string cable = "wire", pcap;
    app.add_option("--cable", cable, "how the two NICs are cabled: wire (in-process) or udp (a datagram socket each on 127.0.0.1, one Ethernet frame per datagram)")
        ->check(CLI::IsMember({"wire", "udp"}))
        ->capture_default_str();
    app.add_option("--pcap", pcap, "write every frame between the two NICs, both ways, to this pcap file");
    double loss = 0;
    app.add_option("--loss", loss, "the probability that the cable loses each frame, either way (0 to 1; the RC transport sends lost packets again)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_flag("--json", as_json, "print one JSON object instead of the table");
    std::string chunk_text = "1M";
    std::uint32_t depth = Pipeline{}.depth;
    app.add_option("--chunk", chunk_text, "bytes per message (a multiple of 4096), K, M or G suffixes")->capture_default_str();
    app.add_option("--depth", depth, "messages in flight")->check(CLI::Range(1, 64))->capture_default_str();
    app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string("p2p_copy: ") + e.what() + "\n"; });
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    const auto size = parse_size(size_text);
    if (!size) {
        std::cerr << "p2p_copy: --size " << size_text << ": not a size (a positive number of bytes up to 1 TiB, "
                  << "with K, M or G: 4096, 64K, 256M, 1G)\n";
        return 2;
    }
    const auto chunk = parse_size(chunk_text);
    if (!chunk || *chunk % 4096 != 0 || *chunk >= (std::uint64_t{1} << 31)) {
        std::cerr << "p2p_copy: --chunk " << chunk_text << ": not a multiple of 4096 bytes below 2 GiB\n";
        return 2;
    }
    // Each simulated GPU holds the whole buffer in this process's memory, and each machine
    // stages the pipeline's chunks in host memory for the bounce path.
    const Pipeline pipeline = fitted({*chunk, depth}, *size);
    const std::uint64_t staged = pipeline.chunk * pipeline.depth;
    if (const auto available = available_memory(); available && 2 * (*size + staged) > *available) {
        const auto gib = [](std::uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30)); };
        std::cerr << "p2p_copy: --size " << rig::text::bytes(*size) << " needs about " << gib(2 * (*size + staged))
                  << " of memory (each simulated GPU holds the buffer, and each machine stages " << rig::text::bytes(staged)
                  << " of it for the bounce path); this machine has " << gib(*available) << " available\n";
        return 2;
    }
    Options options;
    options.pipeline = pipeline;
    options.size = *size;
    options.choice = path == "auto" ? Choice::Auto : path == "p2p" ? Choice::P2p : path == "bounce" ? Choice::Bounce : Choice::Both;
    options.mode = pull ? Mode::Read : Mode::SendRecv;

    const auto gpu_config = p2p_copy::gpu_config(gpu_memory_for(*size));
    const auto gpu_identity = rig::gpu::sim::Model(gpu_config).identity();
    rig::Result<Layout> layout = rig::fail("");
    std::error_code ec;
    const bool directory = std::filesystem::is_directory(topology, ec);
    const bool named = !gpu.empty() || !nic.empty();  // --gpu, --nic: functions of a snapshot
    if (directory && named) {
        layout = from_snapshot(topology, gpu, nic, gpu_identity, nic_identity());
    } else if (directory) {
        if (auto tree = rig::pci::check_tree(topology); !tree)
            std::cerr << "p2p_copy: --topology " << tree.error() << "\n";
        else
            std::cerr << "p2p_copy: --topology " << topology << " is a snapshot: name the GPU and the NIC with --gpu BUS --nic BUS\n";
        return 2;
    } else if (named) {
        const bool builtin_name = std::find(builtin_names.begin(), builtin_names.end(), topology) != builtin_names.end();
        std::cerr << "p2p_copy: --gpu and --nic name functions of a snapshot directory (--topology DIR), and "
                  << (builtin_name ? "the built-in topology " + topology + " places its own GPU and NIC"
                                   : "--topology " + topology + " is no directory")
                  << "\n";
        return 2;
    } else {
        layout = builtin(topology, gpu_identity, nic_identity());
    }
    if (!layout) {
        std::cerr << "p2p_copy: " << layout.error() << "\n";
        return 2;
    }

    auto pair = open_pair(*layout, gpu_config.memory_bytes, cable == "udp" ? Cabling::udp : Cabling::wire);
    if (!pair) {
        std::cerr << "p2p_copy: " << pair.error() << "\n";
        return 1;
    }
    if (!pcap.empty()) {
        if (auto r = (*pair)->cables.front()->capture(pcap); !r) {
            std::cerr << "p2p_copy: --pcap " << r.error() << "\n";
            return 2;
        }
    }
    // --loss: each direction loses frames once, where its sender hands them to the cable:
    // the Wire's two ends, or each machine's datagram cable towards its socket.
    using rig::bnxt::sim::Cable;
    auto& cables = (*pair)->cables;
    if (loss > 0) {
        if (cables.size() == 1) {
            cables[0]->inject({.drop = loss, .seed = 1});
        } else {
            for (std::size_t i = 0; i < cables.size(); ++i) cables[i]->inject(Cable::End::first, {.drop = loss, .seed = 1 + i});
        }
    }
    std::optional<ProgressLine> line;
    auto report = copy(
        **pair, options,
        [&](Path p) -> Progress {
            line.emplace(stderr, std::string(to_string(p)), *size, !as_json);
            return [&](std::uint64_t done) { (*line)(done); };
        },
        [&](Path) {
            if (line) line->finish();
        });
    if (!report) {
        std::cerr << "p2p_copy: " << report.error() << "\n";
        return 1;
    }
    if (loss > 0 && !as_json) {
        std::uint64_t carried = 0, dropped = 0;
        for (const auto& c : cables) {
            for (const Cable::End end : {Cable::End::first, Cable::End::second}) {
                if (cables.size() > 1 && end == Cable::End::second) continue;  // counted by the other machine's cable
                const auto k = c->fault_counters(end);
                carried += k.carried;
                dropped += k.dropped;
            }
        }
        std::cerr << "p2p_copy: --loss " << loss << ": the cable lost " << dropped << " of the " << carried
                  << " frames the NICs sent\n";
    }
    if (as_json) std::cout << json(*report).dump() << "\n";
    else std::cout << table(*report);
    return exit_status(*report, options.choice);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::bad_alloc&) {
        // Memory ran out below the estimate run() checks (another process took it meanwhile,
        // or a ulimit): say so, rather than end in std::terminate.
        std::cerr << "p2p_copy: out of memory; try a smaller --size\n";
        return 1;
    }
}
