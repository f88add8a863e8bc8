// p2p_copy: moves a buffer from GPU memory on one machine into GPU memory on another,
// peer-to-peer (NIC to GPU BAR) and through host memory (bounce), on two simulated
// machines, and prints what ran, why, how fast, and whether the bytes arrived intact.
//
//   p2p_copy [--size 256M] [--path both|auto|p2p|bounce] [--pull]
//            [--topology switch|acs|two-host-bridges|iommu|iommu-direct|iommu-blocked|small-bar
//                        |DIR [--gpu BUS [--nic BUS]]]
//            [--cable wire|udp] [--pcap FILE] [--loss P] [--mtu BYTES] [--json]
//
// As two processes (session.hpp), each building one of the machines, with the same job
// options on both:
//   p2p_copy --listen [ADDR:]PORT [--cable LOCAL_PORT] ...    machine 2, the receiver
//   p2p_copy --connect HOST:PORT [--cable LOCAL_PORT] ...     machine 1, the sender
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
#include <sstream>

#include <sys/resource.h>

#include "ceiling.hpp"
#include "copy.hpp"
#include "machines.hpp"
#include "report.hpp"
#include "rig/bootstrap/peer.hpp"
#include "session.hpp"
#include "rig/pci/nics.hpp"
#include "rig/pci/routes.hpp"
#include "rig/pci/snapshot.hpp"
#include "rig/text.hpp"

namespace {

using namespace p2p_copy;

// "256M", "4k", "1G", "4096", "64MiB": bytes, with binary K/M/G suffixes.
std::optional<std::uint64_t> parse_size(std::string_view s) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (error != std::errc() || end == s.data()) return std::nullopt;
    std::string suffix(end, s.data() + s.size());
    for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static const std::map<std::string, unsigned> shifts{{"", 0},     {"B", 0},   {"K", 10},  {"KB", 10},
                                                        {"KIB", 10}, {"M", 20},  {"MB", 20}, {"MIB", 20},
                                                        {"G", 30},   {"GB", 30}, {"GIB", 30}};
    const auto shift = shifts.find(suffix);
    if (shift == shifts.end() || value == 0 || value > (std::uint64_t{1} << 40) >> shift->second) return std::nullopt;
    return value << shift->second;
}

// The GPU's memory: a power of two that holds the buffer, at least 64 MiB.
std::uint64_t gpu_memory_for(std::uint64_t size) {
    return std::bit_ceil(std::max<std::uint64_t>(size, std::uint64_t{64} << 20));
}

// A "Key: N kB" line of a /proc file, in bytes; nullopt where the file has none.
std::optional<std::uint64_t> proc_kib(const char* file, const std::string& wanted) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string key;
        std::uint64_t kib = 0;
        if (words >> key >> kib && key == wanted) return kib * 1024;
    }
    return std::nullopt;
}

// The memory this process may still take, and what bounds it: the machine's MemAvailable
// (/proc/meminfo), or the address-space limit (RLIMIT_AS, `ulimit -v`) less what the
// process has mapped (VmSize of /proc/self/status), whichever is less; nullopt where
// neither is known.
struct Available {
    std::uint64_t bytes = 0;
    const char* bound = "";
};
std::optional<Available> available_memory() {
    std::optional<Available> a;
    if (const auto mem = proc_kib("/proc/meminfo", "MemAvailable:")) a = Available{*mem, "this machine has"};
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        const std::uint64_t mapped = proc_kib("/proc/self/status", "VmSize:").value_or(0);
        const std::uint64_t cap = limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
        if (!a || cap < a->bytes)
            a = Available{cap, "this process's address-space limit (RLIMIT_AS, ulimit -v) leaves"};
    }
    return a;
}

// How long a receiver waits for its sender to connect, a sender for its receiver to
// accept, and either for each message of the setup (rig::bootstrap::Peer's timeout).
constexpr auto wait_for_sender = std::chrono::minutes(10);
constexpr auto wait_for_receiver = std::chrono::seconds(10);
constexpr auto wait_for_message = std::chrono::seconds(30);

// The UDP port of --cable with --listen or --connect: its number, or the TCP port.
std::optional<std::uint16_t> cable_port(const std::string& text) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(value);
}

// "127.0.0.1:40312" and a port: "127.0.0.1:18515", "[::1]:18515".
std::string with_port(const std::string& address, std::uint16_t port) {
    auto a = rig::bootstrap::parse_address(address);
    return rig::bootstrap::to_string({a ? a->host : std::string("127.0.0.1"), port});
}

// A progress line on stderr for each path, unless the output is JSON.
ProgressFor progress_lines(std::optional<ProgressLine>& line, std::uint64_t size, bool as_json) {
    return [&line, size, as_json](Path p) -> Progress {
        line.emplace(stderr, std::string(to_string(p)), size, !as_json);
        return [&line](std::uint64_t done) { (*line)(done); };
    };
}

// --loss: the directions of the NICs' frames, each losing them once, where its sender
// hands them to a cable: a Wire's two ends, or a machine's datagram cable towards its
// socket (the other machine's cable loses the frames that come back).
using rig::bnxt::sim::Cable;
using Direction = std::pair<Cable*, Cable::End>;

void lose(const std::vector<Direction>& directions, double loss, std::uint64_t seed) {
    for (const auto& [cable, end] : directions) cable->inject(end, {.drop = loss, .seed = seed++});
}

void say_lost(const std::vector<Direction>& directions, double loss) {
    std::uint64_t carried = 0, dropped = 0;
    for (const auto& [cable, end] : directions) {
        const auto k = cable->fault_counters(end);
        carried += k.carried;
        dropped += k.dropped;
    }
    std::cerr << "p2p_copy: --loss " << loss << ": the cable lost " << dropped << " of the " << carried
              << " frames the NICs sent\n";
}

// This process as one machine of two: the receiver (--listen) waits for its sender, the
// sender (--connect) connects; each then builds its machine, cables it towards the other
// and runs its side (session.hpp).
// The NIC rig pairs with the function `gpu` of the snapshot at `dir` (rig/pci/nics.hpp),
// and the sentence that says why. Error where the tree cannot be read, `gpu` is no
// function of it, or it has no NIC.
rig::Result<std::pair<std::string, std::string>> paired_nic(const std::string& dir, const std::string& gpu) {
    const auto bus = rig::pci::normalize_address(gpu);
    if (!bus) return rig::fail("--gpu ", gpu, ": not a bus address (DDDD:BB:DD.F or BB:DD.F)");
    const auto routes = rig::pci::Routes::read(rig::pci::Machine::at(dir));
    if (!routes) return rig::fail(dir, ": ", routes.error());
    const auto at = routes->find(*bus);
    if (!at) return rig::fail(dir, ": --gpu ", *bus, ": no such function in the snapshot");
    const auto pairs = rig::pci::pair_nics(*routes);
    if (!pairs) return rig::fail(dir, ": ", pairs.error());
    const auto pair =
        std::find_if(pairs->begin(), pairs->end(), [&](const rig::pci::Pairing& p) { return p.gpu == *bus; });
    // Not a GPU by its class: its own ranking's first.
    const auto ranked = pair != pairs->end() ? pair->ranked : rig::pci::rank_nics(*routes, *at);
    if (ranked.empty())
        return rig::fail(dir, ": no NIC in the snapshot to pair with ", *bus, "; name one with --nic BUS");
    const std::string nic = pair != pairs->end() && pair->nic ? *pair->nic : ranked.front().nic;
    const auto chosen =
        std::find_if(ranked.begin(), ranked.end(), [&](const rig::pci::RankedNic& n) { return n.nic == nic; });
    std::string why = fmt::format("--nic {}: the NIC rig pairs with {} ({}", nic, *bus, chosen->why);
    if (pair != pairs->end() && pair->why != "its first") why += "; " + pair->why;
    if (ranked.size() > 1) why += fmt::format("; of {} NICs, rig topo --root {} ranks them", ranked.size(), dir);
    return std::pair{nic, why + ")"};
}

int run_apart(const Layout& layout, std::uint64_t gpu_memory_bytes, const std::string& listen,
              const std::string& connect, std::optional<std::uint16_t> local_port, const Options& options,
              const std::string& pcap, double loss, bool as_json) {
    using namespace rig::bootstrap;
    const Role role = listen.empty() ? Role::Sender : Role::Receiver;
    const bool given_port = local_port.has_value();  // --cable LOCAL_PORT
    auto address = parse_address(role == Role::Receiver ? listen : connect);
    const char* flag = role == Role::Receiver ? "--listen" : "--connect";
    if (!address) {
        std::cerr << "p2p_copy: " << flag << " " << address.error() << "\n";
        return 2;
    }
    if (role == Role::Sender && address->host.empty()) {
        std::cerr << "p2p_copy: --connect " << connect << ": names no host (HOST:PORT)\n";
        return 2;
    }
    std::optional<Stream> stream;
    if (role == Role::Receiver) {
        auto listener = Listener::listen(*address);
        if (!listener) {
            std::cerr << "p2p_copy: " << listener.error() << "\n";
            return 1;
        }
        std::cerr << "p2p_copy: machine 2, the receiver, listens on " << listener->address()
                  << " for one sender (p2p_copy --connect HOST:" << listener->port() << ")" << std::endl;
        auto accepted = listener->accept(wait_for_sender);
        if (!accepted) {
            std::cerr << "p2p_copy: " << accepted.error() << "\n";
            return 1;
        }
        stream = std::move(*accepted);
        if (!local_port) local_port = listener->port();
    } else {
        auto connected = Stream::connect(*address, wait_for_receiver);
        if (!connected) {
            std::cerr << "p2p_copy: " << connected.error() << "\n";
            return 1;
        }
        stream = std::move(*connected);
        if (!local_port) {
            auto local = parse_address(stream->local());
            local_port = local ? local->port : 0;
        }
    }
    const std::uint8_t index = role == Role::Sender ? 1 : 2;
    std::cerr << "p2p_copy: machine " << int{index} << ", the " << to_string(role) << ", connected with "
              << stream->peer() << std::endl;
    auto local = open_local(layout, gpu_memory_bytes, index, with_port(stream->local(), *local_port));
    if (!local && !given_port) {
        // The TCP port's number may be another socket's UDP port here (the sender's is one the
        // kernel chose for TCP alone): the kernel chooses the cable's too. The Hello tells
        // the peer which it is.
        local = open_local(layout, gpu_memory_bytes, index, with_port(stream->local(), 0));
    }
    if (!local) {
        std::cerr << "p2p_copy: " << local.error() << "\n";
        return 1;
    }
    if (!pcap.empty()) {
        if (auto r = (*local)->cable->capture(pcap); !r) {
            std::cerr << "p2p_copy: --pcap " << r.error() << "\n";
            return 2;
        }
    }
    const std::vector<Direction> sent{{(*local)->cable.get(), Cable::End::first}};  // this machine's frames
    if (loss > 0) lose(sent, loss, index);
    Peer peer(std::move(*stream), wait_for_message);
    std::optional<ProgressLine> line;
    auto report =
        run_side(**local, peer, role, options, {}, progress_lines(line, options.size, as_json), [&](p2p_copy::Path) {
            if (line) line->finish();
        });
    if (!report) {
        std::cerr << "p2p_copy: " << report.error() << "\n";
        return 1;
    }
    // This process knows its own machine's links only: the ceiling is its side's.
    for (p2p_copy::Outcome& o : report->paths) p2p_copy::judge(o, p2p_copy::ceiling(o.path, {&(*local)->side}));
    if (loss > 0 && !as_json) say_lost(sent, loss);
    if (as_json)
        std::cout << json(*report).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    else std::cout << table(*report);
    return exit_status(*report, options.choice);
}

int run(int argc, char** argv) {
    CLI::App app{
        "Moves a buffer from GPU memory on one simulated machine into GPU memory on another, "
        "peer-to-peer and through host memory, and verifies it."};
    std::string size_text = "256M", path = "both", topology = "switch", gpu, nic;
    bool pull = false, as_json = false;
    app.add_option("--size", size_text, "bytes to move, with K, M or G (binary) suffixes")->capture_default_str();
    app.add_option(
           "--path", path,
           "which paths: both, auto (p2p where the bus forwards and the NICs take their GPUs' BARs, else bounce), p2p, bounce")
        ->check(CLI::IsMember({"both", "auto", "p2p", "bounce"}))
        ->capture_default_str();
    app.add_flag("--pull", pull, "RDMA READ: the receiver reads the sender's GPU region (p2p) or host region (bounce)");
    app.add_option("--topology", topology,
                   "switch, acs, two-host-bridges, iommu, iommu-direct, iommu-blocked, small-bar, or a directory "
                   "`rig snapshot` wrote (with --gpu and --nic)")
        ->capture_default_str();
    app.add_option("--gpu", gpu, "with --topology DIR: the bus address of the GPU the simulated GPU replaces");
    app.add_option("--nic", nic,
                   "with --topology DIR: the bus address of the NIC the simulated bnxt NIC replaces "
                   "(without it, the NIC rig topo pairs with the GPU, and why)");
    std::string cable, pcap, listen, connect;
    auto* listen_option =
        app.add_option("--listen", listen,
                       "[ADDR:]PORT: be machine 2, the receiver, in this process, and wait on this TCP "
                       "address (PORT alone: every local address) for one sender (p2p_copy --connect)");
    app.add_option("--connect", connect,
                   "HOST:PORT: be machine 1, the sender, in this process, connected to a receiver (p2p_copy --listen)")
        ->excludes(listen_option);
    app.add_option(
        "--cable", cable,
        "how the two NICs are cabled: wire (in-process, the default) or udp (a datagram socket each on "
        "127.0.0.1, one Ethernet frame per datagram); with --listen or --connect, LOCAL_PORT: the UDP port of "
        "this side's datagram cable (default: this side's TCP port, or one the kernel chooses where that "
        "one is in use for UDP)");
    app.add_option("--pcap", pcap, "write every frame between the two NICs, both ways, to this pcap file");
    double loss = 0;
    app.add_option(
           "--loss", loss,
           "the probability that the cable loses each frame, either way (0 to 1; the RC transport sends lost packets again)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    std::string mtu_text;
    app.add_option("--mtu", mtu_text,
                   "the queue pairs' path MTU at most this many bytes: 256, 512, 1024, 2048 or 4096 (a fabric of "
                   "1500-byte Ethernet frames carries 1024; default: the ports', 4096)")
        ->check(CLI::IsMember({"256", "512", "1024", "2048", "4096"}));
    app.add_flag("--json", as_json, "print one JSON object instead of the table");
    std::string chunk_text = "1M";
    std::uint32_t depth = Pipeline{}.depth;
    app.add_option("--chunk", chunk_text, "bytes per message (a multiple of 4096), K, M or G suffixes")
        ->capture_default_str();
    app.add_option("--depth", depth, "messages in flight")->check(CLI::Range(1, 64))->capture_default_str();
    app.failure_message(
        [](const CLI::App*, const CLI::Error& e) { return std::string("p2p_copy: ") + e.what() + "\n"; });
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    const bool apart = !listen.empty() || !connect.empty();  // two processes
    std::optional<std::uint16_t> local_port;
    if (apart && !cable.empty()) {
        local_port = cable_port(cable);
        if (!local_port) {
            std::cerr << "p2p_copy: --cable " << cable
                      << ": with --listen or --connect, the UDP port of this side's cable "
                      << "(0 to 65535; 0: one the system chooses)\n";
            return 2;
        }
    } else if (!apart && !cable.empty() && cable != "wire" && cable != "udp") {
        std::cerr << "p2p_copy: --cable " << cable
                  << ": not wire or udp (a port number only with --listen or --connect)\n";
        return 2;
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
    const std::uint64_t machines = apart ? 1 : 2;  // in this process
    if (const auto available = available_memory(); available && machines * (*size + staged) > available->bytes) {
        const auto gib = [](std::uint64_t bytes) {
            return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
        };
        std::cerr << "p2p_copy: --size " << rig::text::bytes(*size) << " needs about "
                  << gib(machines * (*size + staged))
                  << " of memory (each simulated GPU holds the buffer, and each machine stages "
                  << rig::text::bytes(staged) << " of it for the bounce path); " << available->bound << " "
                  << gib(available->bytes) << " available\n";
        return 2;
    }
    Options options;
    options.pipeline = pipeline;
    options.size = *size;
    options.choice = path == "auto"     ? Choice::Auto
                     : path == "p2p"    ? Choice::P2p
                     : path == "bounce" ? Choice::Bounce
                                        : Choice::Both;
    options.mode = pull ? Mode::Read : Mode::SendRecv;
    if (!mtu_text.empty()) options.mtu = static_cast<rig::bnxt::Mtu>(std::countr_zero(std::stoul(mtu_text) >> 8));

    auto gpu_config = p2p_copy::gpu_config(gpu_memory_for(*size));
    // small-bar: the largest BAR below --size (at least a page), the memory as for the rest.
    if (topology == "small-bar") gpu_config.bar_bytes = std::max<std::uint64_t>(4096, std::bit_floor(*size - 1));
    const auto gpu_identity = rig::gpu::sim::Model(gpu_config).identity();
    rig::Result<Layout> layout = rig::fail("");
    std::error_code ec;
    const bool directory = std::filesystem::is_directory(topology, ec);
    const bool named = !gpu.empty() || !nic.empty();  // --gpu, --nic: functions of a snapshot
    if (directory && !gpu.empty() && nic.empty() && rig::pci::check_tree(topology)) {
        const auto paired = paired_nic(topology, gpu);
        if (!paired) {
            std::cerr << "p2p_copy: " << paired.error() << "\n";
            return 2;
        }
        nic = paired->first;
        if (!as_json) std::cout << "p2p_copy: " << paired->second << "\n";  // --json: the object alone
    }
    if (directory && named) {
        layout = from_snapshot(topology, gpu, nic, gpu_identity, nic_identity());
    } else if (directory) {
        if (auto tree = rig::pci::check_tree(topology); !tree)
            std::cerr << "p2p_copy: --topology " << tree.error() << "\n";
        else
            std::cerr << "p2p_copy: --topology " << topology
                      << " is a snapshot: name the GPU with --gpu BUS (and the NIC with --nic BUS, or rig pairs one)\n";
        return 2;
    } else if (named) {
        const bool builtin_name =
            std::find(builtin_names.begin(), builtin_names.end(), topology) != builtin_names.end();
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

    if (apart)
        return run_apart(*layout, gpu_config.memory_bytes, listen, connect, local_port, options, pcap, loss, as_json);
    auto pair = open_pair(*layout, gpu_config, cable == "udp" ? Cabling::udp : Cabling::wire);
    if (!pair) {
        std::cerr << "p2p_copy: " << pair.error() << "\n";
        return 1;
    }
    if (!pcap.empty()) {
        if (auto r = (*pair)->machines->cables.front()->capture(pcap); !r) {
            std::cerr << "p2p_copy: --pcap " << r.error() << "\n";
            return 2;
        }
    }
    std::vector<Direction> directions;
    for (const auto& c : (*pair)->machines->cables) directions.push_back({c.get(), Cable::End::first});
    if ((*pair)->machines->cables.size() == 1)
        directions.push_back({(*pair)->machines->cables[0].get(), Cable::End::second});  // the Wire
    if (loss > 0) lose(directions, loss, 1);
    std::optional<ProgressLine> line;
    auto report = copy(**pair, options, progress_lines(line, *size, as_json), [&](Path) {
        if (line) line->finish();
    });
    if (!report) {
        std::cerr << "p2p_copy: " << report.error() << "\n";
        return 1;
    }
    if (loss > 0 && !as_json) say_lost(directions, loss);
    if (as_json)
        std::cout << json(*report).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
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
