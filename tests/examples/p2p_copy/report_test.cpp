// p2p_copy's report (examples/p2p_copy/report.hpp) and exit status (copy.hpp): the table
// and JSON of a given Report, throughput units, the progress line on a clock the test
// moves, and which outcomes exit 0.
#include "report.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "ceiling.hpp"
#include "copy.hpp"

namespace p2p_copy {
namespace {

using namespace std::chrono_literals;

Report sample() {
    Outcome p2p = Outcome::refused(Path::P2p, "machine 1: distance switch");
    p2p.ran = true;
    p2p.bytes = 4096;
    p2p.seconds = 0.5;
    p2p.verified = true;
    Report r{"switch",
             4096,
             "0000:03:00.0",
             "0000:04:00.0",
             {p2p, Outcome::refused(Path::Bounce, "the firmware refused REGISTER_MR: status 4")},
             "",
             1024};
    r.paths[0].ceiling_bytes_per_second = 31'507'692'304.0;  // Gen4 x16
    r.paths[0].ceiling = "machine 1: Gen4 x16 0000:03:00.0 - 0000:02:08.0, 31.51 GB/s";
    return r;
}

TEST(Report, TableHasAHeadingARowPerPathAndEachReason) {
    EXPECT_EQ(
        table(sample()),
        "p2p_copy: 4 KiB from GPU memory on machine 1 to GPU memory on machine 2 (topology switch: GPU 0000:03:00.0, "
        "NIC 0000:04:00.0 on each; path MTU 1024)\n"
        "\n"
        "path    ran             bytes   seconds   throughput      ceiling  verified\n"
        "p2p     ran              4096     0.500     8.2 KB/s   31.51 GB/s  yes\n"
        "        why: machine 1: distance switch\n"
        "        ceiling: machine 1: Gen4 x16 0000:03:00.0 - 0000:02:08.0, 31.51 GB/s\n"
        "bounce  refused             -         -            -            -  -\n"
        "        why: the firmware refused REGISTER_MR: status 4\n");
}

// docs/bugs.md B30: a figure above what the links carry is impossible and fails the run.
TEST(Report, AFigureAboveItsLinksCeilingIsImpossibleAndFailsTheRun) {
    Report report = sample();
    Outcome& p2p = report.paths[0];
    judge(p2p, {8000.0, "machine 1: Gen1 x1 0000:03:00.0 - 0000:02:08.0, 8.0 KB/s"});  // 8192 B/s measured
    EXPECT_TRUE(p2p.impossible);
    EXPECT_FALSE(p2p.verified);
    EXPECT_NE(p2p.reason.find("; impossible: 8.2 KB/s is above the ceiling of 8.0 KB/s (machine 1: Gen1 x1"),
              std::string::npos)
        << p2p.reason;
    EXPECT_NE(table(report).find("8.2 KB/s     8.0 KB/s  IMPOSSIBLE\n"), std::string::npos) << table(report);
    EXPECT_EQ(exit_status(report, Choice::P2p), 1);
    Outcome below = sample().paths[0];
    judge(below, {1e9, "fast enough"});
    EXPECT_FALSE(below.impossible);
    EXPECT_TRUE(below.verified);
    Outcome unknown = sample().paths[0];
    judge(unknown, {std::nullopt, "machine 1: a link's status is unread, so the ceiling is unknown"});
    EXPECT_FALSE(unknown.impossible);
    EXPECT_FALSE(unknown.ceiling_bytes_per_second);
}

TEST(Report, TableOfOneSideOfTwoProcessesNamesItBelowTheHeadingAndTheJsonDoesNot) {
    Report report = sample();
    report.side = "this process: machine 2, the receiver, with 127.0.0.1:40312";
    const std::string text = table(report);
    EXPECT_EQ(
        text.substr(0, text.find("path    ran")),
        "p2p_copy: 4 KiB from GPU memory on machine 1 to GPU memory on machine 2 (topology switch: GPU 0000:03:00.0, "
        "NIC 0000:04:00.0 on each; path MTU 1024)\n"
        "this process: machine 2, the receiver, with 127.0.0.1:40312\n"
        "\n");
    EXPECT_EQ(json(report), json(sample()));
}

TEST(Report, JsonIsTheIssuesShapeInItsOrder) {
    EXPECT_EQ(
        json(sample()).dump(),
        R"({"topology":"switch","size":4096,"path_mtu":1024,"paths":[)"
        R"({"path":"p2p","ran":true,"reason":"machine 1: distance switch","bytes":4096,"seconds":0.5,"bytes_per_second":8192.0,)"
        R"("ceiling_bytes_per_second":31507692304.0,"impossible":false,"verified":true},)"
        R"({"path":"bounce","ran":false,"reason":"the firmware refused REGISTER_MR: status 4","bytes":0,"seconds":0.0,"bytes_per_second":0.0,)"
        R"("ceiling_bytes_per_second":null,"impossible":false,"verified":false}]})");
}

TEST(Report, ThroughputPicksDecimalUnits) {
    EXPECT_EQ(throughput(1.27e9), "1.27 GB/s");
    EXPECT_EQ(throughput(941.26e6), "941.3 MB/s");
    EXPECT_EQ(throughput(8192), "8.2 KB/s");
    EXPECT_EQ(throughput(0), "0.0 KB/s");
}

// A FILE* whose contents the test reads back.
class Captured {
public:
    Captured() : file_(open_memstream(&data_, &size_)) {}
    ~Captured() {
        std::fclose(file_);
        std::free(data_);
    }
    std::FILE* file() const { return file_; }
    std::string text() {
        std::fflush(file_);
        return std::string(data_, size_);
    }

private:
    char* data_ = nullptr;
    std::size_t size_ = 0;
    std::FILE* file_;
};

TEST(ProgressLine, WritesOnlyAfterASecondAndAtMostFourTimesASecond) {
    Captured out;
    std::chrono::steady_clock::time_point now{};
    ProgressLine line(out.file(), "p2p", 256 * 1024, true, [&] { return now; });
    now += 900ms;
    line(32 * 1024);
    EXPECT_EQ(out.text(), "");
    now += 100ms;
    line(64 * 1024);
    EXPECT_EQ(out.text(), "\rp2p: 64 KiB of 256 KiB (25%), 65.5 KB/s   ");
    now += 200ms;
    line(128 * 1024);
    EXPECT_EQ(out.text(), "\rp2p: 64 KiB of 256 KiB (25%), 65.5 KB/s   ");
    now += 50ms;
    line(160 * 1024);
    EXPECT_EQ(out.text(), "\rp2p: 64 KiB of 256 KiB (25%), 65.5 KB/s   \rp2p: 160 KiB of 256 KiB (62%), 131.1 KB/s   ");
    // The last bytes come within 250 ms of that line: finish writes them before it ends it.
    now += 100ms;
    line(256 * 1024);
    line.finish();
    EXPECT_EQ(out.text(),
              "\rp2p: 64 KiB of 256 KiB (25%), 65.5 KB/s   \rp2p: 160 KiB of 256 KiB (62%), 131.1 KB/s   "
              "\rp2p: 256 KiB of 256 KiB (100%), 194.2 KB/s   \n");
}

TEST(ProgressLine, DisabledOrShortWritesNothing) {
    Captured out;
    std::chrono::steady_clock::time_point now{};
    ProgressLine off(out.file(), "bounce", 1024, false, [&] { return now; });
    now += 5s;
    off(512);
    off.finish();
    ProgressLine quick(out.file(), "bounce", 1024, true, [&] { return now; });
    now += 999ms;
    quick(1024);
    quick.finish();
    EXPECT_EQ(out.text(), "");
}

TEST(ExitStatus, ZeroOnlyWhereEveryPathThatRanWasVerified) {
    Report r = sample();
    EXPECT_EQ(exit_status(r, Choice::Both), 0);  // a refusal among both is information
    EXPECT_EQ(exit_status(r, Choice::Auto), 0);
    r.paths[0].verified = false;
    EXPECT_EQ(exit_status(r, Choice::Both), 1);
}

TEST(ExitStatus, OneWhereAChosenPathWasRefusedOrNothingRan) {
    Report bounce_only = sample();
    bounce_only.paths.erase(bounce_only.paths.begin());
    EXPECT_EQ(exit_status(bounce_only, Choice::Bounce), 1);
    EXPECT_EQ(exit_status(bounce_only, Choice::Both), 1);  // nothing ran
    Report p2p_only = sample();
    p2p_only.paths.pop_back();
    EXPECT_EQ(exit_status(p2p_only, Choice::P2p), 0);
    p2p_only.paths[0].ran = false;
    p2p_only.paths[0].verified = false;
    EXPECT_EQ(exit_status(p2p_only, Choice::P2p), 1);
}

}  // namespace
}  // namespace p2p_copy
