// Running a headless subcommand's entry point in-process (as `attnviz <command> ARGS...` would),
// with its stdout and stderr captured, and the one-line error every failed command must print.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnviz::test {

struct CommandResult {
    int code = 0;
    std::string out, err;
};

/// Calls entry(argc, argv) with argv = {command, args...}, capturing what it prints.
template <typename Entry>
CommandResult run_command(const std::string& command, std::vector<std::string> args, Entry entry) {
    args.insert(args.begin(), command);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = entry(int(args.size()), argv.data());
    CommandResult r;
    r.code = code;
    r.out = ::testing::internal::GetCapturedStdout();
    r.err = ::testing::internal::GetCapturedStderr();
    return r;
}

/// A failed command prints exactly one line starting "attnviz <command>: ", containing must_contain,
/// and exits non-zero.
inline void expect_one_line_error(const CommandResult& r, const std::string& command,
                                  const std::string& must_contain) {
    EXPECT_NE(r.code, 0);
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.rfind("attnviz " + command + ": ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
    EXPECT_NE(r.err.find(must_contain), std::string::npos)
        << "expected '" << must_contain << "' in: " << r.err;
}

}  // namespace attnviz::test
