// bench/p2p/processes_bench.cpp: bench_p2p's row of p2p_copy as two processes
// (README.md, "Across processes and hosts"), beside p2p_bench.cpp's in-process rows:
//
//  p2p/send-processes/<bytes>  p2p/send between two p2p_copy processes on 127.0.0.1, the
//                              receiver (--listen) and the sender (--connect), each with
//                              its own simulated machine, their NICs cabled by datagram
//                              cables (p2p_copy --path p2p, 1 MiB messages, 16 in flight)
//
// Each iteration starts both processes, and the time it counts (manual time) is the one the
// sender reports for its p2p path: from its first send to its last send's completion, which
// leaves out the processes' start, the connection's setup and the checksums, but not that
// each transfer is the first into its processes' fresh memory (the in-process rows repeat
// theirs on machines opened once, as p2p_copy's own first run does not). Both sides
// must report the path verified, or the row is an error. bytes: 1 MiB and 16 MiB, as
// p2p/send-udp. Processes start at a few per second, so the row runs a fixed 8 iterations.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr std::int64_t MiB = 1 << 20;

// A child process with its stdout and stderr on pipes.
class Child {
public:
    explicit Child(std::vector<std::string> args) {
        std::array<int, 2> out_pipe{}, err_pipe{};
        if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0 || ::pipe2(err_pipe.data(), O_CLOEXEC) != 0)
            throw std::runtime_error("pipe");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
        posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
        std::vector<char*> argv;
        args.insert(args.begin(), P2P_COPY_BINARY);
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int r = ::posix_spawn(&pid_, P2P_COPY_BINARY, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out_pipe[1]);
        ::close(err_pipe[1]);
        out_ = out_pipe[0];
        err_ = err_pipe[0];
        if (r != 0) throw std::runtime_error("posix_spawn " P2P_COPY_BINARY);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            (void)wait();
        }
        ::close(out_);
        ::close(err_);
    }

    // The next line of stderr (without its newline), within 10 s.
    std::string line() {
        std::string text;
        char c = 0;
        while (text.empty() || text.back() != '\n') {
            pollfd p{err_, POLLIN, 0};
            if (::poll(&p, 1, 10'000) <= 0 || ::read(err_, &c, 1) != 1)
                throw std::runtime_error("p2p_copy printed no line");
            text += c;
        }
        text.pop_back();
        return text;
    }
    // Waits for the end; its exit status, and what it printed on stdout and stderr.
    int wait() {
        for (int fd : {out_, err_}) {
            char buffer[4096];
            ssize_t n = 0;
            while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
                (fd == out_ ? out : err).append(buffer, static_cast<std::size_t>(n));
        }
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::string out, err;

private:
    pid_t pid_ = -1;
    int out_ = -1, err_ = -1;
};

// The p2p path's seconds as `side` reports it, or an exception saying why not.
double p2p_seconds(const std::string& json, const char* side) {
    const auto object = nlohmann::json::parse(json);
    const auto& path = object.at("paths").at(0);
    if (path.at("path") != "p2p" || !path.at("verified").get<bool>())
        throw std::runtime_error(std::string(side) +
                                 ": the p2p path was not verified: " + path.at("reason").get<std::string>());
    return path.at("seconds").get<double>();
}

void p2p_send_processes(benchmark::State& state) {
    const std::string size = std::to_string(state.range(0));
    const std::vector<std::string> job = {"--size", size, "--path", "p2p", "--json"};
    for (auto _ : state) {
        try {
            std::vector<std::string> listen = {"--listen", "127.0.0.1:0"};
            listen.insert(listen.end(), job.begin(), job.end());
            Child receiver(listen);
            std::smatch port;
            const std::string first = receiver.line();
            if (!std::regex_search(first, port, std::regex("listens on 127\\.0\\.0\\.1:([0-9]+)")))
                throw std::runtime_error("the receiver printed " + first);
            std::vector<std::string> connect = {"--connect", "127.0.0.1:" + port[1].str()};
            connect.insert(connect.end(), job.begin(), job.end());
            Child sender(connect);
            const int sent = sender.wait(), received = receiver.wait();
            if (sent != 0 || received != 0)
                throw std::runtime_error("exit status " + std::to_string(sent) + " and " + std::to_string(received) +
                                         ": " + sender.err + receiver.err);
            const double seconds = p2p_seconds(sender.out, "the sender");
            (void)p2p_seconds(receiver.out, "the receiver");
            state.SetIterationTime(seconds);
        } catch (const std::exception& e) {
            state.SkipWithError(e.what());
            return;
        }
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}

BENCHMARK(p2p_send_processes)
    ->Name("p2p/send-processes")
    ->Arg(1 * MiB)
    ->Arg(16 * MiB)
    ->UseManualTime()
    ->Iterations(8)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
