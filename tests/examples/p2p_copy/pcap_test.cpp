// p2p_copy --pcap and --cable as a user runs them: the capture of a transfer holds every
// frame between the two NICs, both ways, read back through libpcap and decoded by tshark
// where it is installed; over the datagram cable the bytes arrive as over the wire.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "../../support/pcap.hpp"
#include "../../support/run.hpp"
#include "../../support/temp_dir.hpp"

namespace p2p_copy {
namespace {

using rig::test::TempDir;

rig::test::Run p2p_copy(const std::vector<std::string>& args) { return rig::test::run(P2P_COPY_BINARY, args); }

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

TEST(P2pCopyPcap, CaptureOfTheWireHoldsEveryFrameOfTheTransferBothWays) {
    TempDir dir;
    const auto run = p2p_copy({"--size", "1M", "--path", "p2p", "--pcap", (dir.path() / "p2p.pcap").string()});
    ASSERT_EQ(run.status, 0) << run.out;
    expect_one_mebibyte_sent(dir.path() / "p2p.pcap");
}

TEST(P2pCopyPcap, CaptureOfTheDatagramCableHoldsEveryFrameOfTheTransferBothWays) {
    TempDir dir;
    const auto run = p2p_copy({"--size", "1M", "--path", "p2p", "--cable", "udp", "--pcap", (dir.path() / "udp.pcap").string()});
    ASSERT_EQ(run.status, 0) << run.out;
    expect_one_mebibyte_sent(dir.path() / "udp.pcap");
}

TEST(P2pCopyPcap, DatagramCableMovesBothPathsAndPullExactly) {
    for (const char* pull : {"", "--pull"}) {
        std::vector<std::string> args{"--size", "4M", "--cable", "udp", "--depth", "2"};
        if (*pull) args.push_back(pull);
        const auto run = p2p_copy(args);
        EXPECT_EQ(run.status, 0) << run.out;
        EXPECT_EQ(run.out.find("NO"), std::string::npos) << run.out;
    }
}

TEST(P2pCopyPcap, PcapFileThatCannotBeWrittenExitsTwoNamingIt) {
    const auto run = p2p_copy({"--size", "64K", "--pcap", "/nonexistent-rig-dir/p2p.pcap"});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.out.find("p2p_copy: --pcap capture /nonexistent-rig-dir/p2p.pcap: "), std::string::npos) << run.out;
}

}  // namespace
}  // namespace p2p_copy
