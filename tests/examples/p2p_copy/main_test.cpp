// p2p_copy run as a user runs it: each built-in topology with a small --size, its exit
// status, its JSON object field by field, the reasons it gives for refusing a path, a
// `rig snapshot` tree whose GPU and NIC the simulated ones replace, and its captures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../../support/pcap.hpp"
#include "../../support/run.hpp"
#include "../../support/trees.hpp"
#include "rig/pci/snapshot.hpp"

namespace p2p_copy {
namespace {

using nlohmann::json;
using rig::sim::Cpu;
using rig::test::OneSwitch;
using rig::test::TempDir;
using rig::test::Tree;
namespace fs = std::filesystem;

// Runs the p2p_copy binary with `args`.
rig::test::Run p2p_copy(const std::vector<std::string>& args) { return rig::test::run(P2P_COPY_BINARY, args); }

// p2p_copy --json with `args`: its status and the object it printed.
std::pair<int, json> p2p_copy_json(std::vector<std::string> args) {
    args.push_back("--json");
    const rig::test::Run run = p2p_copy(args);
    json object;
    try {
        object = json::parse(run.out);
    } catch (const json::exception& e) {
        ADD_FAILURE() << "not one JSON object (" << e.what() << "):\n" << run.out;
    }
    return {run.status, object};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A path that ran and arrived intact: its bytes, a time, and a rate that is bytes / seconds.
void expect_verified(const json& path, const char* name, std::uint64_t bytes) {
    EXPECT_EQ(path.at("path"), name);
    EXPECT_EQ(path.at("ran"), true) << path.at("reason");
    EXPECT_EQ(path.at("verified"), true) << path.at("reason");
    EXPECT_EQ(path.at("bytes").get<std::uint64_t>(), bytes);
    const double seconds = path.at("seconds").get<double>();
    EXPECT_GT(seconds, 0);
    EXPECT_NEAR(path.at("bytes_per_second").get<double>(), static_cast<double>(bytes) / seconds,
                1e-6 * static_cast<double>(bytes) / seconds);
}

void expect_refused(const json& path, const char* name) {
    EXPECT_EQ(path.at("path"), name);
    EXPECT_EQ(path.at("ran"), false);
    EXPECT_EQ(path.at("verified"), false);
    EXPECT_EQ(path.at("bytes").get<std::uint64_t>(), 0u);
    EXPECT_EQ(path.at("seconds").get<double>(), 0.0);
    EXPECT_EQ(path.at("bytes_per_second").get<double>(), 0.0);
}

const std::string direct_below_switch = "distance switch, forwards (direct below 0000:01:00.0)";

TEST(P2pCopy, SwitchRunsBothPathsAndVerifiesThem) {
    const auto [status, out] = p2p_copy_json({"--size", "256K"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), "switch");
    EXPECT_EQ(out.at("size").get<std::uint64_t>(), 256u * 1024);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 256 * 1024);
    expect_verified(out["paths"][1], "bounce", 256 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "machine 1: " + direct_below_switch)) << why;
    EXPECT_TRUE(has(why, "machine 2: " + direct_below_switch)) << why;
    EXPECT_TRUE(has(out["paths"][1]["reason"],
                    "host memory on each machine: the NIC's DMA memory, at physical addresses the GPU reaches too"))
        << out["paths"][1]["reason"];
}

TEST(P2pCopy, JsonHasExactlyTheIssuesFieldsInItsOrder) {
    const auto [status, out] = p2p_copy_json({"--size", "64K"});
    EXPECT_EQ(status, 0);
    const rig::test::Run raw = p2p_copy({"--size", "64K", "--json"});
    EXPECT_EQ(
        raw.out.rfind(
            "{\"topology\":\"switch\",\"size\":65536,\"path_mtu\":4096,\"paths\":[{\"path\":\"p2p\",\"ran\":true,\"reason\":",
            0),
        0u)
        << raw.out;
    std::set<std::string> keys, path_keys;
    for (const auto& [k, v] : out.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"topology", "size", "path_mtu", "paths"}));
    for (const auto& path : out.at("paths")) {
        path_keys.clear();
        for (const auto& [k, v] : path.items()) path_keys.insert(k);
        EXPECT_EQ(path_keys, (std::set<std::string>{"path", "ran", "reason", "bytes", "seconds", "bytes_per_second",
                                                    "ceiling_bytes_per_second", "impossible", "verified"}));
        // The simulated links: Gen4 x16 each (the simulator's own speed is the CPU's, far below).
        if (path.at("ran") == true) {
            EXPECT_EQ(path.at("ceiling_bytes_per_second"), 16.0 * 1'969'230'769);
            EXPECT_EQ(path.at("impossible"), false);
        }
    }
}

// --mtu caps the queue pairs' path MTU below the ports' 4096 (rig::bnxt::Path::mtu): the
// table's heading and the JSON object say the MTU used, and both paths still verify.
TEST(P2pCopy, MtuCapsThePathMtuAndTheReportSaysIt) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--mtu", "1024"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("path_mtu").get<std::uint32_t>(), 1024u);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    expect_verified(out["paths"][1], "bounce", 64 * 1024);
    const auto pulled = p2p_copy_json({"--size", "64K", "--mtu", "256", "--pull"});
    EXPECT_EQ(pulled.first, 0);
    EXPECT_EQ(pulled.second.at("path_mtu").get<std::uint32_t>(), 256u);
    const rig::test::Run table = p2p_copy({"--size", "64K", "--mtu", "2048"});
    EXPECT_EQ(table.status, 0);
    EXPECT_TRUE(has(table.out, "NIC 0000:04:00.0 on each; path MTU 2048)\n")) << table.out;
    const rig::test::Run plain = p2p_copy({"--size", "64K"});
    EXPECT_TRUE(has(plain.out, "on each; path MTU 4096)\n")) << plain.out;
    const rig::test::Run bad = p2p_copy({"--size", "64K", "--mtu", "1500"});
    EXPECT_EQ(bad.status, 2);
    EXPECT_TRUE(has(bad.out, "--mtu")) << bad.out;
}

TEST(P2pCopy, AcsRefusesP2pNamingTheRedirectingPortsAndTheHostBridgeAndRunsBounce) {
    const auto [status, out] = p2p_copy_json({"--size", "128K", "--topology", "acs"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_refused(out["paths"][0], "p2p");
    const std::string why = out["paths"][0]["reason"];
    for (const char* part : {"machine 1: distance switch, does not forward",
                             "machine 2: distance switch, does not forward", "0000:02:00.0 (ACSCtl 0x001d)",
                             "0000:02:01.0 (ACSCtl 0x001d)", "0000:00:00.0 (8086:6f00) is not in the allow-list"})
        EXPECT_TRUE(has(why, part)) << part << " not in: " << why;
    expect_verified(out["paths"][1], "bounce", 128 * 1024);
}

TEST(P2pCopy, PathP2pOnAcsExitsNonZeroNamingTheBridgeAndRunsNothingElse) {
    const rig::test::Run run = p2p_copy({"--size", "64K", "--topology", "acs", "--path", "p2p"});
    EXPECT_EQ(run.status, 1) << run.out;
    EXPECT_TRUE(has(run.out, "p2p     refused")) << run.out;
    EXPECT_TRUE(has(run.out, "ACS redirects at 0000:02:00.0 (ACSCtl 0x001d)")) << run.out;
    EXPECT_FALSE(has(run.out, "bounce")) << run.out;
}

TEST(P2pCopy, AutoOnAcsRunsBounceAndSaysWhy) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "acs", "--path", "auto"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 64 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_EQ(why.rfind("auto chose bounce, since p2p cannot run: machine 1: distance switch, does not forward", 0), 0u)
        << why;
    EXPECT_TRUE(has(why, "ACSCtl 0x001d")) << why;
}

TEST(P2pCopy, AutoOnSwitchRunsP2p) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--path", "auto"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    EXPECT_EQ(out["paths"][0]["reason"].get<std::string>().rfind("auto chose p2p: ", 0), 0u);
}

TEST(P2pCopy, TwoHostBridgesForwardsThroughTheHostBridgeByTheCpuRule) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "two-host-bridges"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    expect_verified(out["paths"][1], "bounce", 64 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "machine 1: distance system, forwards (through host bridge, the AMD CPU rule)")) << why;
}

const std::string through_iommu =
    "distance switch, forwards (through the host bridge, IOVA via the NIC's IOMMU domain: ACS redirects at 0000:02:00.0 "
    "(ACSCtl 0x001d), 0000:02:01.0 (ACSCtl 0x001d) up to the root complex, where pci0000:00's first device 0000:00:00.0 "
    "(8086:09a2, Intel Ice Lake-SP and later Xeon) is in the allow-list)";
const std::string gpu_host_memory =
    "host memory on each machine: the GPU's pinned host memory (Gpu::host), which the NIC pins again into its IOMMU domain";

// The NIC behind an IOMMU, ACS redirect on the switch ports, an allow-listed root complex:
// p2p runs at IOVAs the NIC's IOMMU domain maps to the GPU's BAR. Bounce runs through the
// GPU's host memory, which the NIC pins.
TEST(P2pCopy, IommuRunsP2pThroughTheHostBridgeAtIovasAndBounceThroughTheGpusHostMemory) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "iommu"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), "iommu");
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "machine 1: " + through_iommu)) << why;
    EXPECT_TRUE(has(why, "machine 2: " + through_iommu)) << why;
    expect_verified(out["paths"][1], "bounce", 64 * 1024);
    EXPECT_TRUE(has(out["paths"][1]["reason"], gpu_host_memory)) << out["paths"][1]["reason"];
}

TEST(P2pCopy, AutoOnIommuRunsP2p) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "iommu", "--path", "auto"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_EQ(why.rfind("auto chose p2p: ", 0), 0u) << why;
    EXPECT_TRUE(has(why, through_iommu)) << why;
}

// Behind an IOMMU without ACS redirect: the switch carries the requests to the BAR at its
// bus addresses, nothing mapped.
TEST(P2pCopy, IommuDirectRunsP2pAtBusAddresses) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "iommu-direct", "--path", "p2p"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    EXPECT_TRUE(
        has(out["paths"][0]["reason"],
            "machine 1: distance switch, forwards (direct below 0000:01:00.0, bus addresses the switch takes to the "
            "BAR before the NIC's IOMMU sees them); behind an IOMMU this direct route means no ACS isolates "
            "0000:04:00.0 from 0000:03:00.0, so they share an IOMMU group, and VFIO takes 0000:04:00.0 only with "
            "0000:03:00.0 free of its vendor driver (bound to vfio-pci or to none)"))
        << out["paths"][0]["reason"];
}

// Behind an IOMMU with ACS redirect to a root complex not on the allow-list: refused,
// naming the host bridge; auto bounces.
TEST(P2pCopy, IommuBlockedRefusesP2pNamingTheHostBridgeAndAutoBounces) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", "iommu-blocked", "--path", "auto"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 64 * 1024);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_EQ(why.rfind("auto chose bounce, since p2p cannot run: machine 1: distance switch, does not forward", 0), 0u)
        << why;
    EXPECT_TRUE(has(why, "0000:00:00.0 (8086:6f00) is not in the allow-list")) << why;
    EXPECT_TRUE(has(why, gpu_host_memory)) << why;
}

TEST(P2pCopy, PathP2pOnIommuBlockedExitsNonZeroNamingTheHostBridgeAndRunsNothingElse) {
    const auto run = p2p_copy({"--size", "64K", "--topology", "iommu-blocked", "--path", "p2p"});
    EXPECT_EQ(run.status, 1) << run.out;
    EXPECT_TRUE(has(run.out, "p2p     refused")) << run.out;
    EXPECT_TRUE(has(run.out, "(8086:6f00) is not in the allow-list")) << run.out;
    EXPECT_FALSE(has(run.out, "bounce")) << run.out;
}

// B16: the GPU's BAR is smaller than --size (64 KiB of 64 MiB for 100 KiB): the memory
// past it has no bus address, so p2p is refused with both sizes, and auto bounces.
TEST(P2pCopy, SmallBarRefusesP2pWithTheSizesAndAutoBounces) {
    const auto [status, out] = p2p_copy_json({"--size", "100K", "--topology", "small-bar"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_refused(out["paths"][0], "p2p");
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "machine 1: distance switch, forwards (direct below 0000:01:00.0); machine 2:")) << why;
    EXPECT_TRUE(has(why, "but machine 1: 0000:03:00.0 (rig sim GPU): bytes [0x10000, 0x19000) of the 128 KiB at "))
        << why;
    EXPECT_TRUE(has(why,
                    "lie outside BAR2, so no NIC can reach them: BAR2 is 64 KiB of the GPU's 64 MiB of memory, with "
                    "0 bytes of it free"))
        << why;
    expect_verified(out["paths"][1], "bounce", 100 * 1024);
    const auto [auto_status, auto_out] = p2p_copy_json({"--size", "100K", "--topology", "small-bar", "--path", "auto"});
    EXPECT_EQ(auto_status, 0);
    ASSERT_EQ(auto_out.at("paths").size(), 1u);
    expect_verified(auto_out["paths"][0], "bounce", 100 * 1024);
    const std::string auto_why = auto_out["paths"][0]["reason"];
    EXPECT_EQ(auto_why.rfind("auto chose bounce, since p2p cannot run: ", 0), 0u) << auto_why;
    EXPECT_TRUE(has(auto_why, "lie outside BAR2")) << auto_why;
}

// Sizes no page divides, through 2 slots of 4 KiB reused many times.
TEST(P2pCopy, PathBounceOnIommuMovesOddSizesExactly) {
    const auto [status, out] =
        p2p_copy_json({"--size", "70001", "--topology", "iommu", "--path", "bounce", "--chunk", "4K", "--depth", "2"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 70001);
}

TEST(P2pCopy, PullReadsTheSendersRegion) {
    const auto [status, out] = p2p_copy_json({"--size", "192K", "--path", "p2p", "--pull", "--chunk", "64K"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "p2p", 192 * 1024);
    EXPECT_TRUE(has(out["paths"][0]["reason"], "machine 2 reads machine 1's GPU region (RDMA READ)"));
}

TEST(P2pCopy, PullRunsBounceByReadOfTheSendersHostRegion) {
    const auto [status, out] =
        p2p_copy_json({"--size", "70001", "--path", "bounce", "--pull", "--chunk", "4K", "--depth", "2"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), "switch");
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 70001);
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "machine 2 reads machine 1's host region (RDMA READ)")) << why;
    EXPECT_TRUE(has(why, "the NIC's DMA memory")) << why;
}

TEST(P2pCopy, PullOnIommuReadsThroughTheHostBridgeAndBouncesThroughTheGpusHostMemory) {
    const auto [status, out] = p2p_copy_json({"--size", "192K", "--topology", "iommu", "--pull", "--chunk", "16K"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), "iommu");
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 192 * 1024);
    EXPECT_TRUE(has(out["paths"][0]["reason"], through_iommu)) << out["paths"][0]["reason"];
    expect_verified(out["paths"][1], "bounce", 192 * 1024);
    const std::string why = out["paths"][1]["reason"];
    EXPECT_TRUE(has(why, "machine 2 reads machine 1's host region (RDMA READ)")) << why;
    EXPECT_TRUE(has(why, gpu_host_memory)) << why;
}

TEST(P2pCopy, PathBounceRunsOnlyBounce) {
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--path", "bounce"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 64 * 1024);
    EXPECT_FALSE(has(out["paths"][0]["reason"], "RDMA READ")) << out["paths"][0]["reason"];
}

// 1000 bytes: not a page, not a word of the checksum; with 4 KiB chunks and 2 host slots
// the bounce path reuses its slots many times.
TEST(P2pCopy, SizesThatAreNoPageMultipleArriveExactly) {
    for (const char* size : {"1000", "70001"}) {
        const auto [status, out] = p2p_copy_json({"--size", size, "--chunk", "4K", "--depth", "2"});
        EXPECT_EQ(status, 0) << size;
        ASSERT_EQ(out.at("paths").size(), 2u);
        expect_verified(out["paths"][0], "p2p", std::stoull(size));
        expect_verified(out["paths"][1], "bounce", std::stoull(size));
    }
}

TEST(P2pCopy, SizeSuffixesAreBinary) {
    for (const auto& [text, bytes] : std::vector<std::pair<std::string, std::uint64_t>>{
             {"4096", 4096}, {"8k", 8192}, {"8KiB", 8192}, {"1M", 1u << 20}, {"1MB", 1u << 20}}) {
        const auto [status, out] = p2p_copy_json({"--size", text, "--path", "p2p"});
        EXPECT_EQ(status, 0) << text;
        EXPECT_EQ(out.at("size").get<std::uint64_t>(), bytes) << text;
    }
}

TEST(P2pCopy, TableNamesEachPathWithoutProgressForShortTransfers) {
    const rig::test::Run run = p2p_copy({"--size", "64K"});
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_TRUE(has(run.out,
                    "p2p_copy: 64 KiB from GPU memory on machine 1 to GPU memory on machine 2 (topology switch: "
                    "GPU 0000:03:00.0, NIC 0000:04:00.0 on each; path MTU 4096)"))
        << run.out;
    EXPECT_TRUE(has(run.out, "path    ran             bytes   seconds   throughput      ceiling  verified")) << run.out;
    EXPECT_TRUE(has(run.out, "        ceiling: machine 1: Gen4 x16 0000:03:00.0 - 0000:02:00.0, 31.51 GB/s"))
        << run.out;
    EXPECT_TRUE(has(run.out, "p2p     ran             65536")) << run.out;
    EXPECT_TRUE(has(run.out, "bounce  ran             65536")) << run.out;
    EXPECT_TRUE(has(run.out, "        why: machine 1 sends from its GPU region")) << run.out;
    EXPECT_FALSE(has(run.out, "\r")) << run.out;
}

TEST(P2pCopy, BadCommandLinesExitTwoNamingTheArgument) {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    for (
        const Case& c : std::vector<Case>{
            {{"--size", "12Q"}, "--size 12Q: not a size"},
            {{"--size", "0"}, "--size 0: not a size"},
            {{"--chunk", "1000"}, "--chunk 1000: not a multiple of 4096"},
            {{"--topology", "nope"},
             "no built-in topology \"nope\" (switch, acs, two-host-bridges, iommu, iommu-direct, iommu-blocked, small-bar;"},
            {{"--gpu", "0000:03:00.0"}, "--gpu and --nic name functions of a snapshot"},
            {{"--topology", "/nonexistent/snapshot", "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"},
             "--topology /nonexistent/snapshot is no directory"},
            {{"--depth", "0"}, "p2p_copy: --depth"},
            {{"--path", "sideways"}, "--path"}}) {
        const rig::test::Run run = p2p_copy(c.args);
        EXPECT_EQ(run.status, 2) << c.args[0] << "\n" << run.out;
        EXPECT_TRUE(has(run.out, c.message)) << run.out;
    }
}

TEST(P2pCopy, ChunksLongerThanTheBufferAreCutToIt) {
    // 16 chunks of 256 MiB would stage 4 GiB on each machine, more than a page list maps.
    const auto [status, out] = p2p_copy_json({"--size", "1M", "--chunk", "256M", "--path", "bounce"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 1u);
    expect_verified(out["paths"][0], "bounce", 1024 * 1024);
}

TEST(P2pCopy, ASizeTheMachineCannotHoldIsRefusedBeforeAnythingRuns) {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit && key != "MemAvailable:") {}
    if (key != "MemAvailable:" || kib >= (std::uint64_t{2} << 30)) GTEST_SKIP() << "no MemAvailable, or 2 TiB of it";
    const rig::test::Run run = p2p_copy({"--size", "1024G"});
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_TRUE(has(run.out, "p2p_copy: --size 1 TiB needs about 2048.0 GiB of memory")) << run.out;
    EXPECT_FALSE(has(run.out, "path ")) << run.out;
}

// Under an address-space limit (ulimit -v) below what --size needs, the size is refused as
// one the machine cannot hold (exit 2, naming the limit), though MemAvailable has room:
// before, the GPU's allocation failed and the run ended with 1.
TEST(P2pCopy, ASizeBeyondTheAddressSpaceLimitIsRefusedBeforeAnythingRuns) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than any limit leaves";
#else
    const rig::test::Run run = rig::test::run(
        "/bin/sh", {"-c", "ulimit -v 1048576 && exec " + std::string(P2P_COPY_BINARY) + " --size 1G --path bounce"});
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_TRUE(has(run.out, "p2p_copy: --size 1 GiB needs about 2.0 GiB of memory")) << run.out;
    EXPECT_TRUE(has(run.out, "this process's address-space limit (RLIMIT_AS, ulimit -v) leaves ")) << run.out;
    EXPECT_FALSE(has(run.out, "path ")) << run.out;
#endif
}

// A snapshot as `rig snapshot` writes it, of a machine with a real GPU (and its audio
// function) and a real NIC below a switch.
class Snapshot : public ::testing::Test {
protected:
    void take(const OneSwitch& machine) {
        const Tree tree(machine.build());
        const auto written = rig::pci::snapshot(tree.machine(), dir_.path());
        ASSERT_TRUE(written) << written.error();
    }
    std::string dir() const { return dir_.path().string(); }

private:
    TempDir dir_;
};

TEST_F(Snapshot, ModelsTakeTheNamedFunctionsPlacesAndItsRoutes) {
    take(OneSwitch{});
    const auto [status, out] =
        p2p_copy_json({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), dir());
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    expect_verified(out["paths"][1], "bounce", 64 * 1024);
    EXPECT_TRUE(has(out["paths"][0]["reason"], "machine 1: " + direct_below_switch)) << out["paths"][0]["reason"];
    const rig::test::Run table =
        p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_TRUE(has(table.out, "GPU 0000:03:00.0, NIC 0000:04:00.0 on each")) << table.out;
}

TEST_F(Snapshot, BusAddressesAsRigSpellsThemNameTheSameFunctions) {
    take(OneSwitch{});
    const rig::test::Run run =
        p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", "03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_TRUE(has(run.out, "GPU 0000:03:00.0, NIC 0000:04:00.0 on each")) << run.out;
}

TEST_F(Snapshot, RedirectingSwitchPortsRefuseP2pNamingThem) {
    OneSwitch machine;
    machine.downstream_acs = 0x001d;
    take(machine);
    const auto [status, out] =
        p2p_copy_json({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(status, 0);
    ASSERT_EQ(out.at("paths").size(), 2u);
    expect_refused(out["paths"][0], "p2p");
    const std::string why = out["paths"][0]["reason"];
    EXPECT_TRUE(has(why, "ACS redirects at 0000:02:08.0 (ACSCtl 0x001d), 0000:02:10.0 (ACSCtl 0x001d)")) << why;
    EXPECT_TRUE(has(why, "0000:00:00.0 (8086:6f00) is not in the allow-list")) << why;
    expect_verified(out["paths"][1], "bounce", 64 * 1024);
}

TEST_F(Snapshot, AnAmdCpuForwardsWhatTheSameSwitchRedirects) {
    OneSwitch machine;
    machine.cpu = Cpu::amd();
    machine.downstream_acs = 0x001d;
    take(machine);
    const auto [status, out] =
        p2p_copy_json({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(status, 0);
    expect_verified(out["paths"][0], "p2p", 64 * 1024);
    EXPECT_TRUE(has(out["paths"][0]["reason"], "forwards (through host bridge below 0000:01:00.0, the AMD CPU rule)"))
        << out["paths"][0]["reason"];
}

// The GPU's way up cannot be read (a 0-byte config on its switch port): refused naming
// what could not be read, not "its bridges loop" as before.
TEST_F(Snapshot, AnUnreadableWayUpIsRefusedSayingWhy) {
    take(OneSwitch{});
    std::ofstream(dir() + "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config", std::ios::trunc);
    const rig::test::Run run =
        p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_TRUE(
        has(run.out, "--gpu 0000:03:00.0: its way up cannot be read: 0000:03:00.0: its upstream bridge 0000:02:08.0: "))
        << run.out;
    EXPECT_FALSE(has(run.out, "loop")) << run.out;
}

// The snapshot's files go through rig's one bounded reader: a proc/cpuinfo that is a link
// to /dev/zero (p2p_copy read it without a bound before: 1 GiB of memory and more) and a
// config that is a link to a file of this machine are refused, not read.
TEST_F(Snapshot, LinksOutOfTheTreeAreNotRead) {
    take(OneSwitch{});
    fs::remove(dir() + "/proc/cpuinfo");
    fs::create_symlink("/dev/zero", dir() + "/proc/cpuinfo");
    const fs::path audio = dir() + "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.1/config";
    fs::remove(audio);
    fs::create_symlink("/proc/self/status", audio);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than the limit leaves";
#else
    // Under a 2 GiB address-space limit, so that a reader without a bound ends at once.
    const rig::test::Run run = rig::test::run(
        "/bin/sh", {"-c", "ulimit -v 2097152 && exec " + std::string(P2P_COPY_BINARY) +
                              " --size 64K --path p2p --topology " + dir() + " --gpu 0000:03:00.0 --nic 0000:04:00.0"});
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_TRUE(has(run.out, "p2p     ran")) << run.out;
#endif
}

// A directory whose name is no UTF-8 (bytes 0xff 0xfe) still gives one JSON object: the
// bytes become U+FFFD (before, nlohmann threw type_error.316 and the run aborted).
TEST(P2pCopy, JsonOfANameThatIsNoUtf8ReplacesItsBytes) {
    TempDir parent;
    const fs::path dir = parent.path() / "snap-\xff\xfe";
    {
        const Tree tree(OneSwitch{}.build());
        const auto written = rig::pci::snapshot(tree.machine(), dir);
        ASSERT_TRUE(written) << written.error();
    }
    const auto [status, out] =
        p2p_copy_json({"--size", "64K", "--topology", dir.string(), "--gpu", "0000:03:00.0", "--nic", "0000:04:00.0"});
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out.at("topology"), (parent.path() / "snap-\xef\xbf\xbd\xef\xbf\xbd").string());
}

TEST_F(Snapshot, WithoutNicTheNicRigPairsWithTheGpuIsTakenAndSaysWhy) {
    take(OneSwitch{});
    const rig::test::Run run = p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", "03:00.0"});
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_TRUE(has(run.out,
                    "p2p_copy: --nic 0000:04:00.0: the NIC rig pairs with 0000:03:00.0 (switch 0000:01:00.0, "
                    "Gen4 x16, NUMA unknown)\n"))
        << run.out;
    EXPECT_TRUE(has(run.out, "GPU 0000:03:00.0, NIC 0000:04:00.0 on each")) << run.out;
    const auto [status, out] = p2p_copy_json({"--size", "64K", "--topology", dir(), "--gpu", "0000:03:00.0"});
    EXPECT_EQ(status, 0);  // the JSON object alone
    const rig::test::Run none = p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", "0000:09:00.0"});
    EXPECT_EQ(none.status, 2);
    EXPECT_TRUE(has(none.out, "--gpu 0000:09:00.0: no such function in the snapshot")) << none.out;
}

TEST_F(Snapshot, FunctionsTheSnapshotLacksOrThatAreBridgesAreRefused) {
    take(OneSwitch{});
    struct Case {
        std::string gpu, nic, message;
    };
    for (const Case& c : std::vector<Case>{
             {"0000:09:00.0", "0000:04:00.0", "--gpu 0000:09:00.0: no such function in the snapshot"},
             {"0000:03:00.0", "0000:02:10.0", "--nic 0000:02:10.0 is a bridge, not an endpoint"},
             {"0000:00:00.0", "0000:04:00.0", "--gpu 0000:00:00.0 is a bridge, not an endpoint"},  // the host bridge
             {"garbage", "0000:04:00.0", "--gpu garbage: not a bus address (DDDD:BB:DD.F or BB:DD.F)"},
             {"04:00.0", "0000:04:00.0", "--gpu and --nic both name 0000:04:00.0"},
             {"0000:04:00.0", "0000:04:00.0", "--gpu and --nic both name 0000:04:00.0"}}) {
        const rig::test::Run run = p2p_copy({"--size", "64K", "--topology", dir(), "--gpu", c.gpu, "--nic", c.nic});
        EXPECT_EQ(run.status, 2) << run.out;
        EXPECT_TRUE(has(run.out, c.message)) << run.out;
    }
    const rig::test::Run missing = p2p_copy({"--topology", dir()});
    EXPECT_EQ(missing.status, 2);
    EXPECT_TRUE(
        has(missing.out, "is a snapshot: name the GPU with --gpu BUS (and the NIC with --nic BUS, or rig pairs one)"))
        << missing.out;
}

TEST(P2pCopy, ADirectoryThatIsNoSnapshotIsNamedSo) {
    const TempDir empty;
    const rig::test::Run run = p2p_copy({"--topology", empty.path().string()});
    EXPECT_EQ(run.status, 2);
    EXPECT_TRUE(has(run.out, "p2p_copy: --topology " + empty.path().string() +
                                 ": not a `rig snapshot` tree (no sys/bus/pci/devices in it)"))
        << run.out;
}

// --pcap and --cable: the capture of a transfer holds every frame between the two NICs,
// both ways, read back through libpcap and decoded by tshark where it is installed.

constexpr std::array<std::uint8_t, 6> machine_1{0x02, 0, 0, 0, 0, 0x01}, machine_2{0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint32_t payload = 4096;  // the path MTU p2p_copy's queue pairs run

// A capture of a 1 MiB peer-to-peer send: 256 frames of a full path MTU from machine 1,
// acknowledgements from machine 2, nothing else; in time order.
void expect_one_mebibyte_sent(const std::filesystem::path& file) {
    const auto c = rig::test::read_pcap(file);
    EXPECT_EQ(c.link_type, 1);  // DLT_EN10MB
    std::size_t full = 0;
    for (std::size_t i = 0; i < c.frames.size(); ++i) {
        const auto& f = c.frames[i];
        EXPECT_EQ(f.length, f.bytes.size()) << i;
        EXPECT_LT(f.length, payload + 128) << i;  // headers of some tens of bytes
        if (f.length > payload) ++full;
        if (i > 0) {
            EXPECT_GE(f.ns, c.frames[i - 1].ns) << i;
        }
    }
    EXPECT_EQ(full, (1u << 20) / payload);
    EXPECT_EQ(rig::test::frames_from(c, machine_1), full);  // the send's frames and only them
    EXPECT_GE(rig::test::frames_from(c, machine_2), 1u);    // acknowledgements
    EXPECT_EQ(rig::test::frames_from(c, machine_1) + rig::test::frames_from(c, machine_2), c.frames.size());
    // A dissector of its own reads the same number of Ethernet frames.
    if (std::system("command -v tshark >/dev/null 2>&1") != 0) return;
    const auto t = rig::test::run("tshark", {"-r", file.string(), "-T", "fields", "-e", "eth.src"});
    ASSERT_EQ(t.status, 0) << t.out;
    std::istringstream lines(t.out);
    std::size_t decoded = 0, from_1 = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.find(':') == std::string::npos) continue;  // tshark's own notes
        ++decoded;
        from_1 += line == "02:00:00:00:00:01" ? 1 : 0;
    }
    EXPECT_EQ(decoded, c.frames.size());
    EXPECT_EQ(from_1, full);
}

// --loss: the cable loses frames, the transport sends them again, the bytes arrive.
TEST(P2pCopy, LossOnTheCableIsRecoveredAndCounted) {
    for (const std::string cable : {"wire", "udp"}) {
        const auto [status, report] =
            p2p_copy_json({"--size", "4M", "--path", "p2p", "--cable", cable, "--loss", "0.01"});
        EXPECT_EQ(status, 0) << cable;
        ASSERT_EQ(report["paths"].size(), 1u) << cable;
        EXPECT_TRUE(report["paths"][0]["verified"].get<bool>()) << cable;
    }
    const auto run = p2p_copy({"--size", "4M", "--path", "p2p", "--loss", "0.01"});
    EXPECT_EQ(run.status, 0) << run.out;
    EXPECT_TRUE(has(run.out, "p2p_copy: --loss 0.01: the cable lost ")) << run.out;
    EXPECT_EQ(p2p_copy({"--loss", "1.5"}).status, 2);
}

TEST(P2pCopy, CaptureOfTheWireHoldsEveryFrameOfTheTransferBothWays) {
    TempDir dir;
    const auto run = p2p_copy({"--size", "1M", "--path", "p2p", "--pcap", (dir.path() / "p2p.pcap").string()});
    ASSERT_EQ(run.status, 0) << run.out;
    expect_one_mebibyte_sent(dir.path() / "p2p.pcap");
}

TEST(P2pCopy, CaptureOfTheDatagramCableHoldsEveryFrameOfTheTransferBothWays) {
    TempDir dir;
    const auto run =
        p2p_copy({"--size", "1M", "--path", "p2p", "--cable", "udp", "--pcap", (dir.path() / "udp.pcap").string()});
    ASSERT_EQ(run.status, 0) << run.out;
    expect_one_mebibyte_sent(dir.path() / "udp.pcap");
}

TEST(P2pCopy, DatagramCableMovesBothPathsAndPullExactly) {
    for (const char* pull : {"", "--pull"}) {
        std::vector<std::string> args{"--size", "4M", "--cable", "udp", "--depth", "2"};
        if (*pull) args.push_back(pull);
        const auto run = p2p_copy(args);
        EXPECT_EQ(run.status, 0) << run.out;
        EXPECT_EQ(run.out.find("NO"), std::string::npos) << run.out;
    }
}

TEST(P2pCopy, PcapFileThatCannotBeWrittenExitsTwoNamingIt) {
    const auto run = p2p_copy({"--size", "64K", "--pcap", "/nonexistent-rig-dir/p2p.pcap"});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.out.find("p2p_copy: --pcap capture /nonexistent-rig-dir/p2p.pcap: "), std::string::npos) << run.out;
}

}  // namespace
}  // namespace p2p_copy
