// p2p_copy's table, JSON object and progress line (report.hpp).
#include "report.hpp"

#include <fmt/format.h>

#include "rig/text.hpp"

namespace p2p_copy {

std::string throughput(double bytes_per_second) {
    if (bytes_per_second >= 1e9) return fmt::format("{:.2f} GB/s", bytes_per_second / 1e9);
    if (bytes_per_second >= 1e6) return fmt::format("{:.1f} MB/s", bytes_per_second / 1e6);
    return fmt::format("{:.1f} KB/s", bytes_per_second / 1e3);
}

std::string table(const Report& report) {
    std::string out = fmt::format(
        "p2p_copy: {} from GPU memory on machine 1 to GPU memory on machine 2 (topology {}: "
        "GPU {}, NIC {} on each{})\n\n",
        rig::text::bytes(report.size), report.topology, report.gpu, report.nic,
        report.path_mtu ? fmt::format("; path MTU {}", report.path_mtu) : "");
    if (!report.side.empty()) out.insert(out.size() - 1, report.side + "\n");
    out += fmt::format("{:<7} {:<8} {:>12} {:>9} {:>12} {:>12}  {}\n", "path", "ran", "bytes", "seconds", "throughput",
                       "ceiling", "verified");
    for (const Outcome& o : report.paths) {
        const std::string ceiling = o.ceiling_bytes_per_second ? throughput(*o.ceiling_bytes_per_second) : "-";
        if (o.ran)
            out += fmt::format("{:<7} {:<8} {:>12} {:>9.3f} {:>12} {:>12}  {}\n", to_string(o.path), "ran", o.bytes,
                               o.seconds, throughput(o.bytes_per_second()), ceiling,
                               o.impossible ? "IMPOSSIBLE"
                               : o.verified ? "yes"
                                            : "NO");
        else
            out += fmt::format("{:<7} {:<8} {:>12} {:>9} {:>12} {:>12}  {}\n", to_string(o.path), "refused", "-", "-",
                               "-", ceiling, "-");
        out += "        why: " + o.reason + "\n";
        if (!o.ceiling.empty()) out += "        ceiling: " + o.ceiling + "\n";
    }
    return out;
}

nlohmann::ordered_json json(const Report& report) {
    nlohmann::ordered_json paths = nlohmann::ordered_json::array();
    for (const Outcome& o : report.paths)
        paths.push_back(nlohmann::ordered_json{
            {"path", std::string(to_string(o.path))},
            {"ran", o.ran},
            {"reason", o.reason},
            {"bytes", o.bytes},
            {"seconds", o.seconds},
            {"bytes_per_second", o.bytes_per_second()},
            {"ceiling_bytes_per_second", o.ceiling_bytes_per_second
                                             ? nlohmann::ordered_json(*o.ceiling_bytes_per_second)
                                             : nlohmann::ordered_json()},
            {"impossible", o.impossible},
            {"verified", o.verified}});
    return nlohmann::ordered_json{{"topology", report.topology},
                                  {"size", report.size},
                                  {"path_mtu", report.path_mtu},
                                  {"paths", std::move(paths)}};
}

ProgressLine::ProgressLine(std::FILE* out, std::string path, std::uint64_t total, bool enabled, Now now)
    : out_(out),
      now_(std::move(now)),
      path_(std::move(path)),
      total_(total),
      enabled_(enabled),
      start_(now_()),
      last_(start_) {}

void ProgressLine::operator()(std::uint64_t done) {
    if (!enabled_) return;
    done_ = done;
    const auto now = now_();
    if (now - start_ < std::chrono::seconds(1) || (written_ && now - last_ < std::chrono::milliseconds(250))) return;
    write(done, now);
}

void ProgressLine::write(std::uint64_t done, std::chrono::steady_clock::time_point now) {
    last_ = now;
    written_ = true;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    std::fputs(fmt::format("\r{}: {} of {} ({}%), {}   ", path_, rig::text::bytes(done), rig::text::bytes(total_),
                           total_ ? done * 100 / total_ : 100, throughput(static_cast<double>(done) / seconds))
                   .c_str(),
               out_);
    std::fflush(out_);
}

void ProgressLine::finish() {
    if (!written_) return;
    write(done_, now_());  // the last bytes, which the 250 ms between lines may have skipped
    std::fputs("\n", out_);
    written_ = false;
}

}  // namespace p2p_copy
