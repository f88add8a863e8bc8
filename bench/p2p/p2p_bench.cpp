// bench/p2p/p2p_bench.cpp: the main job's two paths on p2p_copy's default machines
// (examples/p2p_copy: topology "switch"), row for row in one run against memcpy on this
// machine, so the ratios are read directly:
//
//  p2p/send/<bytes>     peer-to-peer, machine 1 sends from its GPU region into receives
//                       posted in machine 2's GPU region (1 MiB messages, 16 in flight)
//  p2p/read/<bytes>     peer-to-peer, machine 2 reads machine 1's GPU region (RDMA READ)
//  p2p/send-udp/<bytes> p2p/send with the two NICs cabled by datagram cables on 127.0.0.1
//                       (p2p_copy --cable udp): each frame a UDP datagram through the
//                       kernel's loopback, sent and received by the models' threads
//  p2p/send-processes/<bytes>  p2p/send between two p2p_copy processes, each with its
//                       own machine, over datagram cables (processes_bench.cpp)
//  udp/<bytes>          the same bytes, in datagrams of the size of p2p/send's frames
//                       (4162 bytes for 4096 of payload), from one thread to another
//                       through sendmmsg and recvmmsg on 127.0.0.1, 64 at a time, with
//                       no model: at most 256 datagrams (the models' RC window) ahead of
//                       the receiver, so that the socket buffer never overflows. The
//                       ceiling of p2p/send-udp
//  bounce/send/<bytes>  GPU copy engine to host memory, send/receive between host regions,
//                       host memory to GPU, pipelined over 16 host slots of 1 MiB
//  bounce/read/<bytes>  the same, but machine 2 reads machine 1's host region (RDMA READ)
//  memcpy/<bytes>       std::memcpy between two resident buffers of this process
//  handoff/<bytes>      the same bytes through two threads and a ring of 256 frames of
//                       4 KiB: one copies the source into a frame, the other the frame
//                       into the destination. No model with a thread per NIC (one reads
//                       the source, the other writes the destination) moves bytes faster
//                       on this machine: it is the floor under the p2p rows.
//  completions/send-64B 64-byte sends into posted receives, 64 in flight: items/s are
//                       send completions per second
//
// bytes: 4 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB. bytes_per_second is the counter to read;
// ceiling_bytes_per_second beside it is what the path's simulated links carry.
// Each row also gives bytes_per_cpu_second: bytes over the CPU time of the whole process
// (the NIC models' threads included), which a loaded machine disturbs far less than the
// wall clock. Every transfer row checks once, after timing, that the destination's checksum (computed
// on machine 2's GPU) equals the source's, and reports an error where not.
// The NIC models run on their own threads, so the rows use real time; the machine's
// wall clock is shared with whatever else runs on it: compare rows of one run.
#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ceiling.hpp"
#include "copy.hpp"
#include "machines.hpp"
#include "paths.hpp"

namespace {

using namespace p2p_copy;

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
constexpr std::uint64_t largest = 256 * MiB;
const std::vector<std::int64_t> sizes{4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB};

template <class T>
T must(rig::Result<T> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}

// The two machines, their queue pairs, a buffer of `bytes` on each GPU, and every path
// over them (over a datagram cable: p2p/send only), opened once for the whole run.
struct Rig {
    std::unique_ptr<Pair> pair;
    std::optional<Link> link;
    std::optional<Buffers> buffers;
    std::optional<PeerToPeer> send, read, small;
    std::unique_ptr<Bounce> bounce, bounce_read;

    Rig(Cabling cabling, std::uint64_t bytes) {
        auto config = gpu_config(bytes);
        auto layout = must(builtin("switch", rig::gpu::sim::Model(config).identity(), nic_identity()));
        pair = must(open_pair(layout, config.memory_bytes, cabling));
        const Pipeline pipeline;
        link = must(Link::connect(*pair, 64));
        buffers = must(Buffers::allocate(*pair, bytes));
        if (auto r = pair->one.gpu->fill(buffers->source, 1); !r) throw std::runtime_error(r.error());
        if (auto r = pair->two.gpu->fill(buffers->destination, 2); !r) throw std::runtime_error(r.error());
        send = must(PeerToPeer::open(*pair, *link, *buffers, Mode::SendRecv, pipeline));
        if (cabling == Cabling::udp) return;
        read = must(PeerToPeer::open(*pair, *link, *buffers, Mode::Read, pipeline));
        small = must(PeerToPeer::open(*pair, *link, *buffers, Mode::SendRecv, {64, 64}));
        bounce = must(Bounce::open(*pair, *link, *buffers, Mode::SendRecv, pipeline));
        bounce_read = must(Bounce::open(*pair, *link, *buffers, Mode::Read, pipeline));
    }
    ~Rig() {
        // Paths before the link, the link before the machines.
        bounce.reset();
        bounce_read.reset();
        send.reset();
        read.reset();
        small.reset();
        buffers.reset();
        link.reset();
    }
};

// CPU time of the process, all threads, in seconds.
double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void count(benchmark::State& state, std::uint64_t bytes, double cpu_seconds) {
    const double total = static_cast<double>(state.iterations()) * static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<std::int64_t>(total));
    state.counters["bytes_per_cpu_second"] = cpu_seconds > 0 ? total / cpu_seconds : 0;
}

Rig& machines() {
    static Rig rig(Cabling::wire, largest);
    return rig;
}
constexpr std::uint64_t largest_udp = 16 * MiB;
Rig& udp_machines() {
    static Rig rig(Cabling::udp, largest_udp);
    return rig;
}

// Times `transfer` of state.range(0) bytes along `path`, then checks the destination
// once, and states the ceiling the simulated links put on the path (ceiling.hpp) in
// ceiling_bytes_per_second: a row faster than it is impossible and reports an error
// (docs/bugs.md B30). The simulator's own speed is this CPU's, far below its links.
template <class Transfer>
void transfer_rows(benchmark::State& state, Path path, Transfer&& transfer, Rig& rig = machines()) {
    const auto bytes = static_cast<std::uint64_t>(state.range(0));
    // Another pattern first, so that a transfer that moves nothing cannot verify.
    if (auto r = rig.pair->two.gpu->fill(rig.buffers->destination, 0, bytes, state.iterations() + 7); !r) {
        state.SkipWithError(r.error().c_str());
        return;
    }
    const double cpu = process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        if (auto r = transfer(rig, bytes); !r) {
            state.SkipWithError(r.error().c_str());
            return;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    count(state, bytes, process_cpu_seconds() - cpu);
    const Ceiling c = ceiling(path, {&rig.pair->one, &rig.pair->two});
    state.counters["ceiling_bytes_per_second"] = c.bytes_per_second.value_or(0);
    const double rate =
        seconds > 0 ? static_cast<double>(state.iterations()) * static_cast<double>(bytes) / seconds : 0;
    if (c.bytes_per_second && rate > *c.bytes_per_second) {
        state.SkipWithError(
            ("impossible: " + throughput(rate) + " is above the links' ceiling (" + c.why + ")").c_str());
        return;
    }
    auto sums = checksums(*rig.pair, *rig.buffers, bytes);
    if (!sums) state.SkipWithError(sums.error().c_str());
    else if (!sums->equal()) state.SkipWithError("the destination's checksum differs from the source's");
}

void p2p_send(benchmark::State& state) {
    transfer_rows(state, Path::P2p, [](Rig& rig, std::uint64_t bytes) { return rig.send->run(bytes); });
}
void p2p_send_udp(benchmark::State& state) {
    transfer_rows(
        state, Path::P2p, [](Rig& rig, std::uint64_t bytes) { return rig.send->run(bytes); }, udp_machines());
}
void p2p_read(benchmark::State& state) {
    transfer_rows(state, Path::P2p, [](Rig& rig, std::uint64_t bytes) { return rig.read->run(bytes); });
}
void bounce_send(benchmark::State& state) {
    transfer_rows(state, Path::Bounce, [](Rig& rig, std::uint64_t bytes) { return rig.bounce->run(bytes); });
}
void bounce_read(benchmark::State& state) {
    transfer_rows(state, Path::Bounce, [](Rig& rig, std::uint64_t bytes) { return rig.bounce_read->run(bytes); });
}

// Two resident buffers of `largest` bytes for the memcpy and handoff rows.
struct Resident {
    std::vector<std::byte> from = std::vector<std::byte>(largest, std::byte{1});
    std::vector<std::byte> to = std::vector<std::byte>(largest, std::byte{2});
};
Resident& resident() {
    static Resident r;
    return r;
}

void memcpy_row(benchmark::State& state) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    auto& [from, to] = resident();
    const double cpu = process_cpu_seconds();
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), bytes);
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
    count(state, bytes, process_cpu_seconds() - cpu);
}

void handoff_row(benchmark::State& state) {
    constexpr std::size_t frame = 4096, frames = 256;
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const std::size_t per_iteration = (bytes + frame - 1) / frame;
    const std::size_t total = per_iteration * static_cast<std::size_t>(state.max_iterations);
    auto& [from, to] = resident();
    std::vector<std::byte> ring(frames * frame);
    std::atomic<std::size_t> filled{0}, emptied{0};  // frames so far
    auto piece = [&](std::size_t i) { return std::min(frame, bytes - (i % per_iteration) * frame); };
    auto at = [&](std::size_t i) { return (i % per_iteration) * frame; };
    const double cpu = process_cpu_seconds();
    std::jthread sender([&] {
        for (std::size_t i = 0; i < total; ++i) {
            while (i - emptied.load(std::memory_order_acquire) >= frames) {}
            std::memcpy(&ring[(i % frames) * frame], &from[at(i)], piece(i));
            filled.store(i + 1, std::memory_order_release);
        }
    });
    std::size_t i = 0;
    for (auto _ : state) {
        for (const std::size_t end = i + per_iteration; i < end; ++i) {
            while (filled.load(std::memory_order_acquire) <= i) {}
            std::memcpy(&to[at(i)], &ring[(i % frames) * frame], piece(i));
            emptied.store(i + 1, std::memory_order_release);
        }
        benchmark::ClobberMemory();
    }
    sender.join();
    count(state, bytes, process_cpu_seconds() - cpu);
}

// Two UDP sockets on 127.0.0.1 connected to each other, with the socket buffers the
// datagram cable asks for.
struct UdpPair {
    int from = -1, to = -1;
    UdpPair() {
        for (int* fd : {&from, &to}) {
            *fd = ::socket(AF_INET, SOCK_DGRAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            const int bytes = 4 << 20;
            if (::setsockopt(*fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
                ::setsockopt(*fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
            if (::setsockopt(*fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0)
                ::setsockopt(*fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
            if (::bind(*fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("udp row: bind");
        }
        connect(from, to);
        connect(to, from);
    }
    ~UdpPair() {
        ::close(from);
        ::close(to);
    }
    static void connect(int fd, int peer) {
        sockaddr_in a{};
        socklen_t n = sizeof a;
        ::getsockname(peer, reinterpret_cast<sockaddr*>(&a), &n);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), n) != 0) throw std::runtime_error("udp row: connect");
    }
};

void udp_row(benchmark::State& state) {
    constexpr std::size_t payload = 4096, frame = payload + 66, batch = 64, window = 256;
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const std::size_t per_iteration = (bytes + payload - 1) / payload;
    const std::size_t total = per_iteration * static_cast<std::size_t>(state.max_iterations);
    static UdpPair udp;
    auto& [from, to] = resident();
    std::atomic<std::size_t> received{0};  // datagrams so far
    std::atomic<bool> failed{false};
    const double cpu = process_cpu_seconds();
    // The sender: datagram i carries bytes [i * payload, ...) of the source (wrapping at
    // `bytes`) behind 66 bytes of headers, as a model builds a frame in one buffer.
    std::jthread sender([&] {
        std::vector<std::byte> frames(batch * frame);
        std::array<mmsghdr, batch> msgs{};
        std::array<iovec, batch> iov{};
        for (std::size_t i = 0; i < total && !failed;) {
            while (i - received.load(std::memory_order_acquire) + batch > window && !failed) std::this_thread::yield();
            const std::size_t n = std::min(batch, total - i);
            for (std::size_t k = 0; k < n; ++k) {
                const std::size_t at = ((i + k) % per_iteration) * payload;
                const std::size_t piece = std::min(payload, bytes - at);
                std::memcpy(&frames[k * frame + 66], &from[at], piece);
                iov[k] = {&frames[k * frame], 66 + piece};
                msgs[k] = {};
                msgs[k].msg_hdr.msg_iov = &iov[k];
                msgs[k].msg_hdr.msg_iovlen = 1;
            }
            for (std::size_t sent = 0; sent < n;) {
                const int r = ::sendmmsg(udp.from, &msgs[sent], static_cast<unsigned>(n - sent), 0);
                if (r < 0) {
                    failed = true;
                    break;
                }
                sent += static_cast<std::size_t>(r);
            }
            i += n;
        }
    });
    std::vector<std::byte> frames(batch * frame);
    std::array<mmsghdr, batch> msgs{};
    std::array<iovec, batch> iov{};
    std::size_t i = 0;
    for (auto _ : state) {
        for (const std::size_t end = i + per_iteration; i < end && !failed;) {
            for (std::size_t k = 0; k < batch; ++k) {
                iov[k] = {&frames[k * frame], frame};
                msgs[k] = {};
                msgs[k].msg_hdr.msg_iov = &iov[k];
                msgs[k].msg_hdr.msg_iovlen = 1;
            }
            const int r = ::recvmmsg(udp.to, msgs.data(), static_cast<unsigned>(std::min(batch, end - i)),
                                     MSG_WAITFORONE, nullptr);
            if (r <= 0) {
                failed = true;
                break;
            }
            for (int k = 0; k < r; ++k, ++i) {
                const std::size_t at = (i % per_iteration) * payload;
                std::memcpy(&to[at], &frames[static_cast<std::size_t>(k) * frame + 66],
                            msgs[static_cast<std::size_t>(k)].msg_len - 66);
            }
            received.store(i, std::memory_order_release);
        }
        benchmark::ClobberMemory();
    }
    failed = failed || i != total;
    sender.join();
    if (failed) state.SkipWithError("udp row: a datagram was lost or a socket call failed");
    count(state, bytes, process_cpu_seconds() - cpu);
}

// 1024 sends of 64 bytes per iteration, each into a posted receive.
void completions(benchmark::State& state) {
    Rig& rig = machines();
    constexpr std::uint64_t sends = 1024;
    const double cpu = process_cpu_seconds();
    for (auto _ : state) {
        if (auto r = rig.small->run(64 * sends); !r) {
            state.SkipWithError(r.error().c_str());
            return;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * sends));
    const double spent = process_cpu_seconds() - cpu;
    state.counters["items_per_cpu_second"] = spent > 0 ? static_cast<double>(state.iterations() * sends) / spent : 0;
}

void apply_sizes(benchmark::internal::Benchmark* b) {
    for (std::int64_t s : sizes) b->Arg(s);
    b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(p2p_send)->Name("p2p/send")->Apply(apply_sizes);
BENCHMARK(p2p_send_udp)
    ->Name("p2p/send-udp")
    ->Arg(1 * MiB)
    ->Arg(16 * MiB)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(udp_row)->Name("udp")->Arg(1 * MiB)->Arg(16 * MiB)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(p2p_read)->Name("p2p/read")->Apply(apply_sizes);
BENCHMARK(bounce_send)->Name("bounce/send")->Apply(apply_sizes);
BENCHMARK(bounce_read)->Name("bounce/read")->Apply(apply_sizes);
BENCHMARK(memcpy_row)->Name("memcpy")->Apply(apply_sizes);
BENCHMARK(handoff_row)->Name("handoff")->Apply(apply_sizes);
BENCHMARK(completions)->Name("completions/send-64B")->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
