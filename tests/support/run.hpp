// Runs a built program as a user runs it from a shell, for tests of command lines.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace rig::test {

struct Run {
    int status = -1;  // the exit status; -1 where the program did not exit normally
    std::string out;  // stdout and stderr, interleaved as written
};

// Runs `binary` with `args`, each quoted for the shell (no argument may hold a quote).
inline Run run(const std::string& binary, const std::vector<std::string>& args) {
    std::string command = "'" + binary + "'";
    for (const auto& a : args) command += " '" + a + "'";
    command += " 2>&1";
    Run result;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace rig::test
