// The simulated GPU (rig/gpu/sim.hpp, rig/gpu/sim/model.hpp) on a simulated machine: the
// contract of rig/gpu/gpu.hpp, and what only a machine whose bus we control shows: that
// runs are the bus addresses of exactly the bytes (a DMA engine standing in for the NIC
// reads and writes through them, cases B13 and B15), out of memory and BAR2 too small,
// DMA faults where the bus does not carry the engine's requests, and the model's own
// answers to its registers.
//
// The machine: an AMD host bridge, a root port, a switch with three downstream ports
// (no ACS redirect, so peers reach each other below it): two GPUs and a DMA engine, none
// behind an IOMMU, so the engine's DMA memory is at physical addresses every function
// reaches.
#include "rig/gpu/sim.hpp"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "contract.hpp"
#include "rig/gpu/reference.hpp"
#include "rig/gpu/sim/model.hpp"
#include "rig/gpu/sim/registers.hpp"
#include "rig/pci/claim.hpp"
#include "rig/pci/function.hpp"
#include "rig/sim/dma_engine.hpp"
#include "rig/sim/faults.hpp"
#include "rig/sim/system.hpp"
#include "rig/sim/topology.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu::test {
namespace {

using rig::sim::DmaEngine;
using rig::sim::Spec;
using rig::sim::Topology;

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

std::shared_ptr<Space> sim_space() {
    return std::make_shared<Space>(std::int64_t{0x10'0000'0000}, std::int64_t{1} << 40);
}

struct Options {
    sim::ModelConfig gpu;              // both GPUs'
    bool gpu_behind_iommu = false;     // GPU 0 in an IOMMU group of its own
    bool split_host_bridges = false;   // the GPUs below two root ports of an Intel host bridge
    bool engine_behind_iommu = false;  // the DMA engine in an IOMMU group of its own, as a NIC VFIO took
};

// The machine of this file, its GPUs' and the engine's bus addresses.
struct Bench {
    rig::sim::System system;
    std::vector<std::string> gpus;
    std::string engine;
};

Bench build(const Options& options = {}) {
    auto model0 = std::make_shared<sim::Model>(options.gpu);
    auto model1 = std::make_shared<sim::Model>(options.gpu);
    auto engine = std::make_shared<DmaEngine>(DmaEngine::Threading::Caller);
    Topology t(options.split_host_bridges ? rig::sim::Cpu::intel() : rig::sim::Cpu::amd());
    const auto hb = t.host_bridge(0, 0);
    // Broadwell-EP (8086:6f00) is not on Linux's P2P allow-list (docs/p2pdma.md §3).
    t.add(hb, Spec::root_complex(options.split_host_bridges ? 0x8086 : 0x1022,
                                 options.split_host_bridges ? 0x6f00 : 0x1480));
    auto gpu0 = rig::sim::endpoint_spec(0, 0, model0->identity());
    if (options.gpu_behind_iommu) gpu0.iommu_group = 3;
    const auto gpu1 = rig::sim::endpoint_spec(0, 0, model1->identity());
    auto dma = rig::sim::endpoint_spec(0, 0, engine->identity());
    if (options.engine_behind_iommu) dma.iommu_group = 5;
    std::vector<rig::sim::FunctionRef> at;
    if (options.split_host_bridges) {
        const auto rp0 = t.add(hb, Spec::root_port(1, 0, 0x8086, 0x6f02));
        const auto rp1 = t.add(hb, Spec::root_port(2, 0, 0x8086, 0x6f03));
        const auto rp2 = t.add(hb, Spec::root_port(3, 0, 0x8086, 0x6f04));
        at = {t.add(rp0, gpu0), t.add(rp1, gpu1), t.add(rp2, dma)};
    } else {
        const auto rp = t.add(hb, Spec::root_port(1, 0, 0x1022, 0x1483));
        const auto up = t.add(rp, Spec::upstream_port(0x10b5, 0x9797));
        at = {t.add(t.add(up, Spec::downstream_port(0, 0x10b5, 0x9797)), gpu0),
              t.add(t.add(up, Spec::downstream_port(1, 0x10b5, 0x9797)), gpu1),
              t.add(t.add(up, Spec::downstream_port(2, 0x10b5, 0x9797)), dma)};
    }
    Bench bench{must(rig::sim::System::build("sim0", t,
                                             {{t.bus(at[0]), model0}, {t.bus(at[1]), model1}, {t.bus(at[2]), engine}})),
                {t.bus(at[0]), t.bus(at[1])},
                t.bus(at[2])};
    return bench;
}

// The DMA engine standing in for a NIC: it takes its function and copies between bus
// addresses; its DMA memory is the host memory of these tests.
class Engine {
public:
    explicit Engine(const Bench& bench) : function_(must(pci::Function::take(bench.system.machine(), bench.engine))) {
        function_.set_memory_space(true);
        function_.set_bus_master(true);
        registers_ = must(function_.map(0, 0, 0x1000));
    }
    // Host memory the engine and the GPUs reach at physical addresses; one run where
    // `contiguity` asks for it (else page by page, scattered).
    pci::Dma host(std::uint64_t bytes, pci::Contiguity contiguity = pci::Contiguity::Any) {
        return must(function_.alloc_dma(bytes, contiguity));
    }
    // The engine's runs of the process's `bytes` (Function::pin, as Region::pages pins).
    Result<std::vector<pci::Run>> pin(const pci::Window& bytes) { return function_.pin(bytes.data(), bytes.size()); }

    // Copies n (<= 1 MiB) bytes from bus address `from` to `to`; the status it ends with.
    DmaEngine::Status copy(pci::DmaAddress from, pci::DmaAddress to, std::uint32_t n) {
        registers_.write64(DmaEngine::source, from.value);
        registers_.write64(DmaEngine::destination, to.value);
        registers_.write32(DmaEngine::length, n);
        registers_.write32(DmaEngine::go, 1);
        return static_cast<DmaEngine::Status>(registers_.read32(DmaEngine::status));
    }

private:
    pci::Function function_;
    pci::Window registers_;
};

// The bus address of byte `at` of the page-rounded runs.
pci::DmaAddress locate(const Runs& runs, std::uint64_t at) {
    at += runs.offset;
    for (const auto& run : runs.runs) {
        if (at < run.bytes) return run.address + at;
        at -= run.bytes;
    }
    throw std::out_of_range("past the runs");
}

class SimPlatform final : public Platform {
public:
    SimPlatform() : bench_(build()), engine_(bench_) {}
    std::shared_ptr<Space> space() override { return sim_space(); }
    Gpu gpu(int index, std::shared_ptr<Space> space) override {
        return must(
            sim::open(bench_.system.machine(), bench_.gpus.at(static_cast<std::size_t>(index)), std::move(space)));
    }
    HostBuffer host(const Gpu&, std::uint64_t bytes) override {
        dma_.push_back(engine_.host(bytes));
        return HostBuffer::of(dma_.back());
    }
    std::uint64_t too_large(const Gpu&) override { return 2 * GiB; }  // the GPUs have 1 GiB
    bool publishes_runs() const override { return true; }

private:
    Bench bench_;
    Engine engine_;
    std::vector<pci::Dma> dma_;
};

INSTANTIATE_TEST_SUITE_P(Sim, Contract,
                         ::testing::Values(Backend{"sim", [] { return std::make_unique<SimPlatform>(); }}));

std::vector<std::byte> download(const Gpu& g, const Memory& m, std::uint64_t offset, std::uint64_t n) {
    std::vector<std::byte> out(n);
    must(g.download(m, offset, out));
    return out;
}

std::vector<std::byte> filled(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> bytes(n);
    reference::fill(bytes, seed);
    return bytes;
}

// A GPU of 64 MiB whose free VRAM is two 1 MiB extents: the hole `b` left between `a`
// and `c`, and the last MiB.
struct Fragmented {
    explicit Fragmented(const Bench& bench)
        : gpu(must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()))),
          a(must(gpu.alloc(1 * MiB))),
          b(must(gpu.alloc(1 * MiB))),
          c(must(gpu.alloc(61 * MiB))),
          hole(must(b.runs())),
          last(must(c.runs())) {
        must(gpu.free(b));
    }
    Gpu gpu;
    Memory a, b, c;
    Runs hole, last;
};

Options small() {
    Options options;
    options.gpu.memory_bytes = 64 * MiB;
    return options;
}

TEST(SimGpu, RunsAreTheBusAddressesOfTheBytes) {
    // A fragmented allocation, so that it has several runs: the engine reads each page
    // at the bus address the runs give and finds the GPU's bytes there.
    const Bench bench = build(small());
    Engine engine(bench);
    Fragmented f(bench);
    const Memory m = must(f.gpu.alloc(2 * MiB));
    const Runs runs = must(m.runs());
    ASSERT_EQ(runs.runs.size(), 2u);
    must(f.gpu.fill(m, 42));
    const pci::Dma host = engine.host(2 * MiB, pci::Contiguity::Contiguous);
    for (std::uint64_t at = 0; at < 2 * MiB; at += 64 * KiB)
        ASSERT_EQ(engine.copy(locate(runs, at), host.runs[0].address + at, 64 * KiB), DmaEngine::Status::Done) << at;
    std::vector<std::byte> seen(2 * MiB);
    host.window.read(0, seen);
    EXPECT_EQ(seen, filled(2 * MiB, 42));
}

TEST(SimGpu, AFragmentedAllocationHasOneRunPerExtentInOrder) {
    const Bench bench = build(small());
    Fragmented f(bench);
    const Gpu& g = f.gpu;
    const Memory m = must(g.alloc(2 * MiB));
    const Runs runs = must(m.runs());
    ASSERT_EQ(runs.runs.size(), 2u);
    EXPECT_EQ(runs.runs[0], f.hole.runs[0]);
    EXPECT_EQ(runs.runs[1], (pci::Run{f.last.runs[0].address + 61 * MiB, 1 * MiB}));
    // A range across the two extents keeps its bytes in order.
    const auto bytes = filled(100'000, 5);
    must(g.upload(m, 1 * MiB - 50'000, bytes));
    EXPECT_EQ(download(g, m, 1 * MiB - 50'000, bytes.size()), bytes);
    EXPECT_EQ(must(g.checksum(m, 1 * MiB - 50'000, bytes.size())), reference::checksum(bytes));
    const Runs across = must(m.runs(1 * MiB - 4096, 8192));
    EXPECT_EQ(across.runs,
              (std::vector<pci::Run>{{f.hole.runs[0].address + (1 * MiB - 4096), 4096}, {runs.runs[1].address, 4096}}));
}

TEST(SimGpu, ASubRangeRegisteredByTheNicGetsExactlyItsBytes) {
    // B13: 64 MiB allocated, [base + 1 MiB, base + 5 MiB) registered; the "NIC" writes
    // pattern P at offset 0 of that region: P lands at base + 1 MiB, base is untouched.
    const Bench bench = build();
    Engine engine(bench);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * MiB));
    must(g.fill(m, 0, 2 * MiB, 1));
    const Runs region = must(m.runs(1 * MiB, 4 * MiB));
    const pci::Dma host = engine.host(4096);
    const auto p = filled(4096, 99);
    host.window.write(0, p);
    ASSERT_EQ(engine.copy(host.runs[0].address, locate(region, 0), 4096), DmaEngine::Status::Done);
    EXPECT_EQ(download(g, m, 1 * MiB, 4096), p);
    EXPECT_EQ(download(g, m, 0, 4096), filled(4096, 1));
}

TEST(SimGpu, AnUnalignedRangeIsReachedThroughItsCoveringPageAtItsOffset) {
    // B15 (a): base + 0x123, 1000 bytes: one page-rounded run and offset 0x123.
    const Bench bench = build();
    Engine engine(bench);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * KiB));
    must(g.fill(m, 3));
    const Runs region = must(m.runs(0x123, 1000));
    ASSERT_EQ(region.offset, 0x123u);
    const pci::Dma host = engine.host(4096);
    const auto p = filled(1000, 8);
    host.window.write(0, p);
    ASSERT_EQ(engine.copy(host.runs[0].address, locate(region, 0), 1000), DmaEngine::Status::Done);
    auto expected = filled(64 * KiB, 3);
    std::copy(p.begin(), p.end(), expected.begin() + 0x123);
    EXPECT_EQ(download(g, m, 0, 64 * KiB), expected);
}

TEST(SimGpu, OutOfMemoryNamesTheGpuTheSizeAndWhatIsFree) {
    Options options;
    options.gpu.memory_bytes = 64 * MiB;
    const Bench bench = build(options);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(48 * MiB));
    const auto more = g.alloc(32 * MiB);
    ASSERT_FALSE(more);
    EXPECT_EQ(more.error(), bench.gpus[0] + " (rig sim GPU): out of memory for 32 MiB (16 MiB free of its 64 MiB)");
}

// B16: a BAR smaller than the memory. What lies past the BAR is memory all the same
// (upload, download, fill, checksum, copies), but has no runs, and runs says why.
TEST(SimGpu, MemoryPastASmallBarHasNoRunsAndSaysBothSizesAndWhatIsFree) {
    Options options;
    options.gpu.memory_bytes = 256 * MiB;
    options.gpu.bar_bytes = 64 * MiB;
    const Bench bench = build(options);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory small = must(g.alloc(16 * MiB));  // behind the BAR: runs as before
    const auto small_runs = must(small.runs());
    ASSERT_EQ(small_runs.runs.size(), 1u);
    const Memory m = must(g.alloc(128 * MiB));  // from 16 MiB of VRAM on: 48 MiB behind the BAR, 80 MiB past it
    const auto r = m.runs();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(),
              bench.gpus[0] + " (rig sim GPU): bytes [0x3000000, 0x8000000) of the 128 MiB at " +
                  text::hex(static_cast<std::uint64_t>(m.address())) +
                  " lie outside BAR2, so no NIC can reach them: BAR2 is 64 MiB of the GPU's 256 MiB of memory, with "
                  "0 bytes of it free");
    EXPECT_TRUE(m.runs(0, 48 * MiB)) << "the part behind the BAR has runs";
    const auto past = m.runs(100 * MiB, 4096);
    ASSERT_FALSE(past);
    EXPECT_NE(past.error().find("bytes [0x6400000, 0x6401000)"), std::string::npos) << past.error();
    // The memory works: bytes past the BAR go up and down through the engine.
    const auto p = filled(300 * KiB + 7, 9);
    must(g.upload(m, 100 * MiB + 3, p));
    EXPECT_EQ(download(g, m, 100 * MiB + 3, p.size()), p);
    must(g.fill(m, 60 * MiB, 8 * MiB, 4));
    EXPECT_EQ(must(g.checksum(m, 60 * MiB, 8 * MiB)), reference::fill_checksum(4, 8 * MiB));
}

TEST(SimGpu, PointerIsTheProcessAddressOfTheBytesBehindBar2) {
    // Memory::pointer (what DLPack exports): the GPU's own bytes, where this process sees
    // them through BAR2's mapping; a write there is a write to GPU memory.
    const Bench bench = build(small());
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(1 * MiB));
    const Pointer p = must(m.pointer());
    EXPECT_EQ(p.device, Pointer::Device::Host);
    EXPECT_EQ(p.ordinal, 0);
    must(g.fill(m, 7));
    EXPECT_EQ(std::vector<std::byte>(p.data, p.data + 4096), filled(4096, 7));
    p.data[100] = std::byte{0xAB};
    EXPECT_EQ(download(g, m, 100, 1), std::vector<std::byte>{std::byte{0xAB}});
    const Memory other = must(g.alloc(1 * MiB));
    EXPECT_EQ(must(other.pointer()).data, p.data + 1 * MiB);  // the next extent of VRAM
}

TEST(SimGpu, PointerOfMemoryInPiecesOrPastTheBarIsAnErrorNamingTheGpuAndTheSize) {
    const Bench bench = build(small());
    Fragmented f(bench);
    const Memory m = must(f.gpu.alloc(2 * MiB));  // the 1 MiB hole and the last MiB
    const auto r = m.pointer();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), bench.gpus[0] + " (rig sim GPU): its 2 MiB at " +
                             text::hex(static_cast<std::uint64_t>(m.address())) +
                             " lie in 2 pieces of VRAM, which the process sees as no one range");
    Options options;
    options.gpu.memory_bytes = 4 * MiB;
    options.gpu.bar_bytes = 1 * MiB;
    const Bench small_bar = build(options);
    const Gpu g = must(sim::open(small_bar.system.machine(), small_bar.gpus[0], sim_space()));
    const Memory behind = must(g.alloc(1 * MiB));
    EXPECT_TRUE(behind.pointer());
    const auto past = must(g.alloc(1 * MiB)).pointer();
    ASSERT_FALSE(past);
    EXPECT_NE(past.error().find("lie past BAR2 (1 MiB)"), std::string::npos) << past.error();
    const Memory gone = must(g.alloc(64 * KiB));
    must(g.free(gone));
    EXPECT_THROW((void)gone.pointer(), std::invalid_argument);
}

TEST(SimGpu, BarFreeCountsOnlyTheBar) {
    Options options;
    options.gpu.memory_bytes = 256 * MiB;
    options.gpu.bar_bytes = 64 * MiB;
    const Bench bench = build(options);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(96 * MiB));
    const auto r = m.runs();
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("with 0 bytes of it free"), std::string::npos) << r.error();
    must(g.free(m));
    const Memory a = must(g.alloc(32 * MiB));
    const Memory b = must(g.alloc(64 * MiB));  // 32 MiB behind the BAR, 32 past it
    const auto rb = b.runs();
    ASSERT_FALSE(rb);
    EXPECT_NE(rb.error().find("with 0 bytes of it free"), std::string::npos) << rb.error();
    must(g.free(a));
    const auto again = b.runs();
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().find("with 32 MiB of it free"), std::string::npos) << again.error();
}

// B18 (docs/bugs.md): a NIC's region claims the runs it registered on its machine
// (Region::device); here the test claims them as the region would.
pci::Claim claim_runs(const Bench& bench, const Runs& runs, std::string by) {
    std::vector<pci::Span> spans;
    for (const auto& run : runs.runs) spans.push_back({run.address.value, run.bytes});
    return bench.system.machine().claims().claim(spans, std::move(by));
}

TEST(SimGpu, FreeOfMemoryWhoseRunsAreClaimedIsRefusedNamingTheClaimAndTheRange) {
    const Bench bench = build(small());
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(1 * MiB));
    const Runs part = must(m.runs(256 * KiB, 64 * KiB));
    pci::Claim claim = claim_runs(bench, part, "the device region of 64 KiB of NIC 0000:09:00.0");
    const std::uint64_t first = part.runs[0].address.value;
    const auto refused = g.free(m);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), bench.gpus[0] + " (rig sim GPU): cannot free the 1 MiB at " +
                                   text::hex(static_cast<std::uint64_t>(m.address())) +
                                   ": the device region of 64 KiB of NIC 0000:09:00.0 covers bus addresses [" +
                                   text::hex(first) + ", " + text::hex(first + 64 * KiB) +
                                   ") of it, which the NIC may still write; deregister the region first");
    must(g.fill(m, 5));  // still allocated
    claim.drop();
    must(g.free(m));
    std::vector<std::byte> out(8);
    EXPECT_THROW((void)g.download(m, 0, out), std::invalid_argument);
}

TEST(SimGpu, MemoryWhoseLastHandleGoesWhileClaimedIsKeptUntilTheClaimGoes) {
    const Bench bench = build(small());
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    std::optional<Memory> all = must(g.alloc(64 * MiB));  // every byte of VRAM
    pci::Claim claim = claim_runs(bench, must(all->runs()), "the device region of 64 MiB of NIC 0000:09:00.0");
    all.reset();
    EXPECT_EQ(bench.system.machine().claims().kept(), 1u);
    EXPECT_FALSE(g.alloc(64 * KiB)) << "the VRAM the region covers was handed out again";
    claim.drop();
    EXPECT_EQ(bench.system.machine().claims().kept(), 0u);
    EXPECT_TRUE(g.alloc(64 * MiB));
}

TEST(SimGpu, CloseWhileAClaimCoversMemoryIsRefusedAndFreesNothing) {
    const Bench bench = build(small());
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory free_one = must(g.alloc(64 * KiB));
    const Memory covered = must(g.alloc(128 * KiB));
    pci::Claim claim = claim_runs(bench, must(covered.runs()), "the device region of 128 KiB of NIC 0000:09:00.0");
    const auto refused = g.close();
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().find(": cannot free the 128 KiB at " +
                                   text::hex(static_cast<std::uint64_t>(covered.address())) +
                                   ": the device region of 128 KiB of NIC 0000:09:00.0 covers bus addresses"),
              std::string::npos)
        << refused.error();
    must(g.fill(free_one, 1));  // nothing freed, still open
    EXPECT_TRUE(g.alloc(64 * KiB));
    claim.drop();
    must(g.close());
    std::vector<std::byte> out(8);
    EXPECT_THROW((void)g.download(covered, 0, out), std::invalid_argument);
}

TEST(SimGpu, FreeOrCloseOfHostMemoryWhosePagesAreClaimedIsRefused) {
    const Bench bench = build();
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const HostMemory host = must(g.host(16 * KiB));
    const auto first = reinterpret_cast<std::uintptr_t>(host.buffer().window.data());
    const pci::Span span{first + 4 * KiB, 4 * KiB};
    pci::Claim claim = pci::process_claims().claim({&span, 1}, "the pages region of 4 KiB of NIC 0000:09:00.0");
    const auto refused = g.free(host);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), bench.gpus[0] + " (rig sim GPU): cannot free the host memory of 16 KiB at " +
                                   text::hex(first) +
                                   ": the pages region of 4 KiB of NIC 0000:09:00.0 covers process addresses [" +
                                   text::hex(first + 4 * KiB) + ", " + text::hex(first + 8 * KiB) +
                                   ") of it, which the NIC may still write; deregister the region first");
    const auto close = g.close();
    ASSERT_FALSE(close);
    EXPECT_NE(close.error().find("covers process addresses"), std::string::npos) << close.error();
    EXPECT_EQ(host.buffer().size(), 16 * KiB);  // still there
    claim.drop();
    must(g.free(host));
    EXPECT_THROW((void)host.buffer(), std::invalid_argument);
}

TEST(SimGpu, ACopyTheIommuDoesNotMapFaultsAtItsBusAddressAndMovesNothing) {
    // GPU 0 behind an IOMMU that maps nothing for it: the engine's physical DMA memory is
    // not reachable from it.
    Options options;
    options.gpu_behind_iommu = true;
    const Bench bench = build(options);
    Engine engine(bench);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * KiB));
    must(g.fill(m, 1));
    const pci::Dma host = engine.host(64 * KiB);
    const auto r = g.copy_to_host(m, 0, HostBuffer::of(host), 0, 4096);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find(bench.gpus[0]), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("copying 4 KiB to host memory"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("bus address " + text::hex(host.runs[0].address.value)), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("Unsupported Request"), std::string::npos) << r.error();
    std::vector<std::byte> seen(4096);
    host.window.read(0, seen);
    EXPECT_EQ(seen, std::vector<std::byte>(4096));
}

// The GPU's host memory is DMA memory of its function: at physical addresses here, which
// a function at physical addresses may not pin (its pages would outlive the process's
// claim on them), so it is not what a NIC without an IOMMU registers.
TEST(SimGpu, HostMemoryOfTheGpuIsRefusedToAPinAtPhysicalAddresses) {
    const Bench bench = build();
    Engine engine(bench);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const HostMemory host = must(g.host(64 * KiB));
    ASSERT_FALSE(host.buffer().runs.empty());
    const auto pinned = engine.pin(host.buffer().window);
    ASSERT_FALSE(pinned);
    EXPECT_NE(pinned.error().find(bench.engine + ": cannot pin 64 KiB"), std::string::npos) << pinned.error();
    EXPECT_NE(pinned.error().find("reaches physical addresses (no IOMMU)"), std::string::npos) << pinned.error();
}

// The bounce path's host memory where the NIC is behind an IOMMU: the GPU (at physical
// addresses) copies into its host memory, a function behind an IOMMU pins the same pages
// at IOVAs of its own domain and reads there what the GPU wrote; and back.
TEST(SimGpu, AFunctionBehindAnIommuPinsTheGpusHostMemoryAndReachesWhatTheGpuCopies) {
    Options options;
    options.engine_behind_iommu = true;
    const Bench bench = build(options);
    Engine engine(bench);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * KiB));
    const HostMemory host = must(g.host(8 * KiB));
    const std::vector<pci::Run> iovas = must(engine.pin(host.buffer().window));
    ASSERT_EQ(iovas.size(), 1u);  // one IOVA range, whatever the physical pages
    EXPECT_EQ(iovas[0].bytes, 8 * KiB);
    EXPECT_NE(iovas[0].address, host.buffer().runs[0].address);
    const pci::Dma other = engine.host(8 * KiB);  // the engine's own memory, at its IOVAs

    const auto out = filled(8 * KiB, 21);
    must(g.upload(m, 0, out));
    must(g.copy_to_host(m, 0, host.buffer(), 0, out.size()));
    ASSERT_EQ(engine.copy(iovas[0].address, other.runs[0].address, 8 * KiB), DmaEngine::Status::Done);
    std::vector<std::byte> seen(8 * KiB);
    other.window.read(0, seen);
    EXPECT_EQ(seen, out);

    const auto in = filled(8 * KiB, 22);
    other.window.write(0, in);
    ASSERT_EQ(engine.copy(other.runs[0].address, iovas[0].address, 8 * KiB), DmaEngine::Status::Done);
    must(g.copy_from_host(host.buffer(), 0, m, 16 * KiB, in.size()));
    EXPECT_EQ(download(g, m, 16 * KiB, in.size()), in);
}

// A GPU behind an IOMMU reaches its own host memory through its domain, where the
// engine's memory at physical addresses faults (ACopyTheIommuDoesNotMapFaults...).
TEST(SimGpu, HostMemoryOfAGpuBehindAnIommuIsReachedThroughItsDomain) {
    Options options;
    options.gpu_behind_iommu = true;
    const Bench bench = build(options);
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * KiB));
    must(g.fill(m, 3));
    const HostMemory host = must(g.host(64 * KiB));
    ASSERT_EQ(host.buffer().runs.size(), 1u);  // an IOVA range of its domain
    must(g.copy_to_host(m, 0, host.buffer(), 0, 64 * KiB));
    std::vector<std::byte> seen(64 * KiB);
    host.buffer().window.read(0, seen);
    EXPECT_EQ(seen, filled(64 * KiB, 3));
}

TEST(SimGpu, HostMemoryTheMachineCannotGiveNamesTheGpuAndTheSize) {
    const Bench bench = build();
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    rig::sim::Faults faults(bench.system);
    faults.fail_at(rig::sim::Operation::AllocDma, "the transport fell over", bench.gpus[0]);
    const auto host = g.host(64 * KiB);
    ASSERT_FALSE(host);
    EXPECT_EQ(host.error().rfind(bench.gpus[0] + " (rig sim GPU): no host memory of 64 KiB for its copy engine: ", 0),
              0u)
        << host.error();
    EXPECT_NE(host.error().find("the transport fell over"), std::string::npos) << host.error();
}

TEST(SimGpu, APeerTheBusDoesNotForwardToIsRefusedNamingBoth) {
    // Two root ports of a Broadwell-EP host bridge, which is not on Linux's allow-list:
    // peer requests between them are not supported (docs/p2pdma.md §2, §3).
    Options options;
    options.split_host_bridges = true;
    const Bench bench = build(options);
    auto space = sim_space();
    const Gpu a = must(sim::open(bench.system.machine(), bench.gpus[0], space));
    const Gpu b = must(sim::open(bench.system.machine(), bench.gpus[1], space));
    const Memory m = must(a.alloc(64 * KiB));
    const auto mapped = b.map(m);
    ASSERT_FALSE(mapped);
    EXPECT_NE(mapped.error().find(bench.gpus[0]), std::string::npos) << mapped.error();
    EXPECT_NE(mapped.error().find(bench.gpus[1]), std::string::npos) << mapped.error();
    EXPECT_NE(mapped.error().find("64 KiB"), std::string::npos) << mapped.error();
}

TEST(SimGpu, DmabufIsAnErrorPointingToTheRuns) {
    const Bench bench = build();
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    const Memory m = must(g.alloc(64 * KiB));
    const auto buf = m.dmabuf(0, 4096);
    ASSERT_FALSE(buf);
    EXPECT_NE(buf.error().find("Memory::runs"), std::string::npos) << buf.error();
}

TEST(SimGpu, OpenRefusesAFunctionThatIsNotTheSimulatedGpu) {
    const Bench bench = build();
    const auto g = sim::open(bench.system.machine(), bench.engine, sim_space());
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().rfind(bench.engine + ": not the simulated GPU", 0), 0u) << g.error();
}

TEST(SimGpu, ASecondOpenOfATakenGpuFails) {
    const Bench bench = build();
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    EXPECT_FALSE(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
}

TEST(SimGpu, ThreadsFillAndChecksumTheirOwnMemoryAtOnce) {
    const Bench bench = build();
    const Gpu g = must(sim::open(bench.system.machine(), bench.gpus[0], sim_space()));
    std::vector<Memory> memories;
    for (int i = 0; i < 4; ++i) memories.push_back(must(g.alloc(1 * MiB + 8)));
    std::vector<std::uint64_t> sums(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            must(g.fill(memories[i], i));
            sums[i] = must(g.checksum(memories[i]));
        });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(sums[i], reference::fill_checksum(i, 1 * MiB + 8)) << i;
}

TEST(SimGpuModel, VramIsNotCommittedUntilTouched) {
    sim::Model model({.memory_bytes = 16 * GiB});
    const auto vram = model.memory(sim::reg::memory_bar);
    ASSERT_EQ(vram.size(), 16 * GiB);
    auto resident = [&] {
        std::vector<unsigned char> pages(256);
        if (::mincore(vram.data(), pages.size() * 4096, pages.data()) != 0) throw std::runtime_error("mincore failed");
        std::vector<std::size_t> in;
        for (std::size_t i = 0; i < pages.size(); ++i)
            if (pages[i] & 1) in.push_back(i);
        return in;
    };
    EXPECT_EQ(resident(), std::vector<std::size_t>{});
    vram[3 * 4096 + 5] = std::byte{1};
    EXPECT_EQ(resident(), std::vector<std::size_t>{3});
}

// The model through its registers alone (registers.hpp), as a driver sees it.
class Registers : public ::testing::Test {
protected:
    Registers() : bench(build()), function(must(pci::Function::take(bench.system.machine(), bench.gpus[0]))) {
        function.set_memory_space(true);
        registers = must(function.map(sim::reg::register_bar, 0, sim::reg::register_bar_bytes));
    }
    std::uint64_t store(std::uint64_t index, std::uint64_t va, std::uint64_t bytes, std::uint64_t target,
                        sim::reg::SegmentKind kind) {
        registers.write64(sim::reg::seg_va, va);
        registers.write64(sim::reg::seg_bytes, bytes);
        registers.write64(sim::reg::seg_target, target);
        registers.write64(sim::reg::seg_kind, std::to_underlying(kind));
        registers.write64(sim::reg::seg_index, index);
        return registers.read64(sim::reg::seg_status);
    }
    std::uint64_t command(sim::reg::Opcode opcode, std::uint64_t va, std::uint64_t bytes) {
        registers.write64(sim::reg::cmd_va, va);
        registers.write64(sim::reg::cmd_bytes, bytes);
        registers.write64(sim::reg::cmd_opcode, std::to_underlying(opcode));
        return registers.read64(sim::reg::status);
    }
    Bench bench;
    pci::Function function;
    pci::Window registers;
};

TEST_F(Registers, IdentifyTheGpu) {
    EXPECT_EQ(registers.read64(sim::reg::id), 0x0001'5550'4747'4952u);  // "RIGGPU", version 1
    EXPECT_EQ(registers.read64(sim::reg::memory_bytes), 1 * GiB);
    EXPECT_EQ(registers.read64(sim::reg::bar_bytes), 1 * GiB);
    EXPECT_EQ(registers.read32(sim::reg::id), 0xffff'ffffu);  // not an 8-byte access
}

TEST_F(Registers, AnUnmappedVaFaultsWithItsAddress) {
    using sim::reg::SegmentKind;
    ASSERT_EQ(store(0, 0x10'0000, 0x1'0000, 0, SegmentKind::vram), 0u);
    // The range runs 4 bytes past the segment: the fill stops there.
    EXPECT_EQ(command(sim::reg::Opcode::fill, 0x10'0000, 0x1'0004), std::to_underlying(sim::reg::Status::fault));
    EXPECT_EQ(registers.read64(sim::reg::fault_kind), std::to_underlying(sim::reg::FaultKind::translation));
    EXPECT_EQ(registers.read64(sim::reg::fault_address), 0x11'0000u);
}

TEST_F(Registers, OverlappingMisalignedAndOutOfRangeSegmentsAreRefused) {
    using sim::reg::SegmentKind;
    using sim::reg::SegmentStatus;
    ASSERT_EQ(store(0, 0x10'0000, 0x1'0000, 0, SegmentKind::vram), 0u);
    EXPECT_EQ(store(1, 0x10'f000, 0x1000, 0, SegmentKind::vram), std::to_underlying(SegmentStatus::overlap));
    EXPECT_EQ(store(1, 0x0f'f000, 0x2000, 0, SegmentKind::vram), std::to_underlying(SegmentStatus::overlap));
    EXPECT_EQ(store(0, 0x10'8000, 0x1'0000, 0, SegmentKind::vram), 0u);  // an entry may move over its old self
    EXPECT_EQ(store(1, 0x20'0800, 0x1000, 0, SegmentKind::vram), std::to_underlying(SegmentStatus::unaligned));
    EXPECT_EQ(store(1, 0x20'0000, 0x1000, 1 * GiB, SegmentKind::vram), std::to_underlying(SegmentStatus::outside_vram));
    EXPECT_EQ(store(4096, 0x20'0000, 0x1000, 0, SegmentKind::vram), std::to_underlying(SegmentStatus::bad_index));
    EXPECT_EQ(store(1, 0x20'0000, 0x1000, 0, static_cast<SegmentKind>(7)), std::to_underlying(SegmentStatus::bad_kind));
}

TEST_F(Registers, ACommandOfNoBytesIsRefused) {
    EXPECT_EQ(command(sim::reg::Opcode::checksum, 0, 0), std::to_underlying(sim::reg::Status::fault));
    EXPECT_EQ(registers.read64(sim::reg::fault_kind), std::to_underlying(sim::reg::FaultKind::bad_command));
}

TEST_F(Registers, AResetEmptiesTheSegmentTable) {
    using sim::reg::SegmentKind;
    ASSERT_EQ(store(0, 0x10'0000, 0x1'0000, 0, SegmentKind::vram), 0u);
    ASSERT_TRUE(function.reset());
    function.set_memory_space(true);
    EXPECT_EQ(command(sim::reg::Opcode::checksum, 0x10'0000, 8), std::to_underlying(sim::reg::Status::fault));
    EXPECT_EQ(registers.read64(sim::reg::fault_kind), std::to_underlying(sim::reg::FaultKind::translation));
}

}  // namespace
}  // namespace rig::gpu::test
