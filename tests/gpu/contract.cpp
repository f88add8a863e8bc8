// The contract of rig/gpu/gpu.hpp, the same for every backend: memory at Space addresses
// (cases B13, B15 for sub-ranges and odd offsets), round trips, fill and checksum against
// the host's reference, copies through host memory, and the errors and refusals.
#include "contract.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "rig/gpu/reference.hpp"
#include "rig/text.hpp"

namespace rig::gpu::test {

void skip(const std::string& why) {
    std::cout << "skipped: " << why << std::endl;
    std::exit(77);
}

void Contract::SetUp() {
    platform = GetParam().make();
    space = platform->space();
}

Gpu Contract::gpu(int index) { return platform->gpu(index, space); }

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937_64 random(seed);
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) b = static_cast<std::byte>(random());
    return bytes;
}

std::vector<std::byte> download(const Gpu& gpu, const Memory& memory, std::uint64_t offset, std::uint64_t n) {
    std::vector<std::byte> out(n);
    must(gpu.download(memory, offset, out));
    return out;
}

std::uint64_t end(const Memory& m) { return static_cast<std::uint64_t>(m.address()) + m.bytes(); }
std::uint64_t start(const Memory& m) { return static_cast<std::uint64_t>(m.address()); }

TEST_P(Contract, AllocIsAtAPageAlignedAddressOfTheSpace) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(3 * MiB + 5));
    EXPECT_EQ(m.bytes(), 3 * MiB + 5);
    EXPECT_EQ(m.address() % 4096, 0);
    EXPECT_GE(m.address(), space->base());
    EXPECT_LE(m.address() + static_cast<std::int64_t>(m.bytes()), space->base() + space->length());
    EXPECT_EQ(m.gpu(), g.bus() + " (" + g.name() + ")");
}

TEST_P(Contract, AllocationsOfOneGpuNeverOverlap) {
    const Gpu g = gpu(0);
    std::vector<Memory> all;
    for (std::uint64_t n : {4096ul, 1 * MiB, 12345ul, 2 * MiB, 4096ul}) all.push_back(must(g.alloc(n)));
    for (std::size_t i = 0; i < all.size(); ++i)
        for (std::size_t j = i + 1; j < all.size(); ++j)
            EXPECT_TRUE(end(all[i]) <= start(all[j]) || end(all[j]) <= start(all[i])) << i << " and " << j;
}

TEST_P(Contract, AllocationsOfTwoGpusOfOneSpaceNeverOverlap) {
    const Gpu a = gpu(0), b = gpu(1);
    const Memory ma = must(a.alloc(2 * MiB)), mb = must(b.alloc(2 * MiB));
    EXPECT_TRUE(end(ma) <= start(mb) || end(mb) <= start(ma));
}

TEST_P(Contract, PeerMapsTheMemoryAtTheSameAddress) {
    const Gpu a = gpu(0), b = gpu(1);
    const Memory owned = must(a.alloc(64 * KiB));
    const Memory mapped = must(b.map(owned));
    EXPECT_EQ(mapped.address(), owned.address());
    EXPECT_EQ(mapped.bytes(), owned.bytes());
    EXPECT_EQ(mapped.gpu(), b.bus() + " (" + b.name() + ")");

    const auto bytes = random_bytes(64 * KiB, 1);
    must(a.upload(owned, 0, bytes));
    EXPECT_EQ(must(b.checksum(mapped)), reference::checksum(bytes));  // b reads a's bytes
    must(b.fill(mapped, 100, 1000, 9));                               // b writes them
    auto expected = bytes;
    reference::fill(std::span(expected).subspan(100, 1000), 9);
    EXPECT_EQ(download(a, owned, 0, 64 * KiB), expected);
}

TEST_P(Contract, MappedMemoryOutlivesItsOwnersFree) {
    const Gpu a = gpu(0), b = gpu(1);
    const Memory owned = must(a.alloc(64 * KiB));
    const Memory mapped = must(b.map(owned));
    must(a.fill(owned, 5));
    must(a.free(owned));
    EXPECT_EQ(must(b.checksum(mapped)), reference::fill_checksum(5, 64 * KiB));
    // The range is still held by b: a new allocation does not land on it.
    const Memory other = must(a.alloc(64 * KiB));
    EXPECT_TRUE(end(other) <= start(mapped) || end(mapped) <= start(other));
}

TEST_P(Contract, UploadThenDownloadGivesTheBytesBackAtAnOddOffset) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(256 * KiB));
    const auto bytes = random_bytes(100'003, 2);
    must(g.upload(m, 0x123, bytes));
    EXPECT_EQ(download(g, m, 0x123, bytes.size()), bytes);
}

TEST_P(Contract, FillWritesTheHostReferencesPatternAndNothingElse) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(64 * KiB));
    std::vector<std::byte> expected(64 * KiB, std::byte{0x5a});
    must(g.upload(m, 0, expected));
    must(g.fill(m, 0x123, 1000, 77));  // B15 (a): base + 0x123, 1000 bytes
    reference::fill(std::span(expected).subspan(0x123, 1000), 77);
    EXPECT_EQ(download(g, m, 0, 64 * KiB), expected);
}

TEST_P(Contract, ChecksumMatchesTheHostReference) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(1 * MiB));
    const auto bytes = random_bytes(1 * MiB, 3);
    must(g.upload(m, 0, bytes));
    EXPECT_EQ(must(g.checksum(m)), reference::checksum(bytes));
    EXPECT_EQ(must(g.checksum(m, 0x123, 1000)), reference::checksum(std::span(bytes).subspan(0x123, 1000)));
    EXPECT_EQ(must(g.checksum(m, 4096, 5)), reference::checksum(std::span(bytes).subspan(4096, 5)));
}

TEST_P(Contract, FillThenChecksumIsTheReferenceFillChecksum) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(4 * MiB + 3));
    must(g.fill(m, 12345));
    EXPECT_EQ(must(g.checksum(m)), reference::fill_checksum(12345, 4 * MiB + 3));
}

TEST_P(Contract, CopyToHostMovesTheBytesThroughTheCopyEngine) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(256 * KiB));
    const HostBuffer host = platform->host(g, 256 * KiB);
    const auto bytes = random_bytes(70'000, 4);
    must(g.upload(m, 333, bytes));
    must(g.copy_to_host(m, 333, host, 4097, bytes.size()));
    std::vector<std::byte> seen(256 * KiB);
    host.window.read(0, seen);
    EXPECT_EQ(std::vector(seen.begin() + 4097, seen.begin() + 4097 + 70'000), bytes);
    EXPECT_TRUE(std::all_of(seen.begin(), seen.begin() + 4097, [](std::byte b) { return b == std::byte{0}; }));
    EXPECT_TRUE(std::all_of(seen.begin() + 4097 + 70'000, seen.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST_P(Contract, CopyFromHostMovesTheBytesThroughTheCopyEngine) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(256 * KiB));
    must(g.fill(m, 1));
    const HostBuffer host = platform->host(g, 256 * KiB);
    const auto bytes = random_bytes(70'000, 5);
    host.window.write(4097, bytes);
    must(g.copy_from_host(host, 4097, m, 333, bytes.size()));
    std::vector<std::byte> expected(256 * KiB);
    reference::fill(expected, 1);
    std::copy(bytes.begin(), bytes.end(), expected.begin() + 333);
    EXPECT_EQ(download(g, m, 0, 256 * KiB), expected);
}

// The GPU's own host memory (Gpu::host), 3 pages less a byte: on a page, at least that
// large, and reached by the copy engine both ways at odd offsets.
TEST_P(Contract, HostMemoryStartsOnAPageAndTheCopyEngineReachesItBothWays) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(64 * KiB));
    const HostMemory host = must(g.host(3 * 4096 - 1));
    const HostBuffer& buffer = host.buffer();
    EXPECT_GE(host.size(), 3u * 4096 - 1);
    ASSERT_TRUE(buffer.window.is_mapped());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.window.data()) % 4096, 0u);
    const auto out = random_bytes(9000, 6);
    must(g.upload(m, 17, out));
    must(g.copy_to_host(m, 17, buffer, 2049, out.size()));
    std::vector<std::byte> seen(out.size());
    buffer.window.read(2049, seen);
    EXPECT_EQ(seen, out);
    const auto in = random_bytes(9000, 7);
    buffer.window.write(3001, in);
    must(g.copy_from_host(buffer, 3001, m, 40'000, in.size()));
    EXPECT_EQ(download(g, m, 40'000, in.size()), in);
    EXPECT_EQ(download(g, m, 17, out.size()), out);  // the first copy's bytes stay
}

TEST_P(Contract, HostMemoryOfNoBytesThrows) {
    const Gpu g = gpu(0);
    EXPECT_THROW((void)g.host(0), std::invalid_argument);
}

// A copy of the handle keeps the memory: the last one gives it back.
TEST_P(Contract, HostMemoryLivesWhileAHandleDoes) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(64 * KiB));
    must(g.fill(m, 9));
    std::optional<HostMemory> kept;
    {
        const HostMemory host = must(g.host(4096));
        kept = host;
    }
    must(g.copy_to_host(m, 0, kept->buffer(), 0, 4096));
    std::vector<std::byte> expected(4096), seen(4096);
    reference::fill(expected, 9);
    kept->buffer().window.read(0, seen);
    EXPECT_EQ(seen, expected);
}

TEST_P(Contract, AllocBeyondTheGpusMemoryNamesTheGpuAndTheSize) {
    const Gpu g = gpu(0);
    const std::uint64_t n = platform->too_large(g);
    const auto m = g.alloc(n);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().find(g.bus()), std::string::npos) << m.error();
    EXPECT_NE(m.error().find(text::bytes(n)), std::string::npos) << m.error();
}

TEST_P(Contract, RunsCoverExactlyTheAllocation) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(3 * MiB + 5));
    const auto runs = m.runs();
    if (!platform->publishes_runs()) {
        ASSERT_FALSE(runs);
        EXPECT_NE(runs.error().find(g.bus()), std::string::npos) << runs.error();
        return;
    }
    ASSERT_TRUE(runs) << runs.error();
    EXPECT_EQ(runs->offset, 0u);
    std::uint64_t total = 0;
    for (const auto& run : runs->runs) {
        EXPECT_EQ(run.address.value % 4096, 0u);
        EXPECT_EQ(run.bytes % 4096, 0u);
        EXPECT_GT(run.bytes, 0u);
        total += run.bytes;
    }
    EXPECT_EQ(total, 3 * MiB + 4096);  // 3 MiB + 5 bytes, rounded up to the page
}

TEST_P(Contract, RunsOfASubRangeStartAtThePageOfItsFirstByte) {
    // B13: a 64 MiB allocation, [base + 1 MiB, base + 5 MiB) registered; B15 (a): base + 0x123.
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(64 * MiB));
    if (!platform->publishes_runs()) skip("this backend publishes no runs");
    const Runs whole = must(m.runs());
    const Runs part = must(m.runs(1 * MiB, 4 * MiB));
    EXPECT_EQ(part.offset, 0u);
    // The part's runs are the whole's runs from byte 1 MiB to 5 MiB, in order.
    auto locate = [&](std::uint64_t at) {
        for (const auto& run : whole.runs) {
            if (at < run.bytes) return run.address + at;
            at -= run.bytes;
        }
        return pci::DmaAddress{~0ull};
    };
    std::uint64_t at = 1 * MiB, total = 0;
    for (const auto& run : part.runs) {
        EXPECT_EQ(run.address, locate(at));
        at += run.bytes;
        total += run.bytes;
    }
    EXPECT_EQ(total, 4 * MiB);
    const Runs odd = must(m.runs(0x123, 1000));
    EXPECT_EQ(odd.offset, 0x123u);
    ASSERT_EQ(odd.runs.size(), 1u);
    EXPECT_EQ(odd.runs[0], (pci::Run{locate(0), 4096}));
    const Runs straddling = must(m.runs(4000, 200));  // two pages for 200 bytes
    EXPECT_EQ(straddling.offset, 4000u);
    std::uint64_t straddled = 0;
    for (const auto& run : straddling.runs) straddled += run.bytes;
    EXPECT_EQ(straddled, 8192u);
}

TEST_P(Contract, FreedMemoryIsRefusedAndAFreeAgainDoesNothing) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(4096));
    must(g.free(m));
    must(g.free(m));
    std::vector<std::byte> out(8);
    try {
        (void)g.download(m, 0, out);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("was freed"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)m.runs(0, 8), std::invalid_argument);
}

TEST_P(Contract, FreedHostMemoryIsRefusedAndAFreeAgainDoesNothing) {
    const Gpu g = gpu(0);
    const HostMemory host = must(g.host(4096));
    must(g.free(host));
    must(g.free(host));
    try {
        (void)host.buffer();
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("the host memory of " + g.bus()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("was freed"), std::string::npos) << e.what();
    }
}

TEST_P(Contract, CloseFreesEveryMemoryAndLaterAllocationsThrow) {
    const Gpu g = gpu(0);
    const Memory m = must(g.alloc(4096));
    const HostMemory host = must(g.host(4096));
    must(g.close());
    must(g.close());
    std::vector<std::byte> out(8);
    EXPECT_THROW((void)g.download(m, 0, out), std::invalid_argument);
    EXPECT_THROW((void)host.buffer(), std::invalid_argument);
    try {
        (void)g.alloc(4096);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(g.bus() + " (" + g.name() + ") is closed"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)g.host(4096), std::invalid_argument);
}

TEST_P(Contract, MemoryOfAnotherGpuIsRefused) {
    const Gpu a = gpu(0), b = gpu(1);
    const Memory m = must(a.alloc(4096));
    std::vector<std::byte> out(8);
    EXPECT_THROW((void)b.download(m, 0, out), std::invalid_argument);
    EXPECT_THROW((void)b.free(m), std::invalid_argument);
    EXPECT_THROW((void)a.map(m), std::invalid_argument);
    const HostMemory host = must(a.host(4096));
    EXPECT_THROW((void)b.free(host), std::invalid_argument);
}

TEST_P(Contract, RangesOutsideTheMemoryAndEmptyAllocationsThrow) {
    const Gpu g = gpu(0);
    EXPECT_THROW((void)g.alloc(0), std::invalid_argument);
    const Memory m = must(g.alloc(4096 + 10));
    std::vector<std::byte> out(11);
    EXPECT_THROW((void)g.download(m, 4096, out), std::invalid_argument);  // 1 byte past the end
    EXPECT_THROW((void)g.fill(m, 4096 + 10, 1, 0), std::invalid_argument);
    EXPECT_THROW((void)g.checksum(m, ~0ull, 2), std::invalid_argument);  // offset + n wraps
    EXPECT_THROW((void)m.runs(0, 0), std::invalid_argument);
    EXPECT_THROW((void)m.runs(4096, 11), std::invalid_argument);
    const HostBuffer host = platform->host(g, 4096);
    EXPECT_THROW((void)g.copy_to_host(m, 0, host, 1, 4096), std::invalid_argument);
}

}  // namespace
}  // namespace rig::gpu::test
