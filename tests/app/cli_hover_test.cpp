// The GUI's --hover ROW,COL flag (app/cli_options.*): a screenshot hovers only the cell it names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/cli_options.hpp"

namespace attnviz::app {
namespace {

Options parse(std::vector<std::string> args) {
    args.insert(args.begin(), "attnviz");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    bool help = false, version = false;
    return parse_args(int(argv.size()), argv.data(), &help, &version);
}

std::string usage_error(std::vector<std::string> args) {
    try {
        parse(std::move(args));
    } catch (const UsageError& e) {
        return e.message;
    }
    return "";
}

TEST(CliHover, RowAndColumnAreParsed) {
    const Options o = parse({"--screenshot", "x.png", "--hover", "3,5"});
    ASSERT_TRUE(o.hover.has_value());
    EXPECT_EQ(o.hover->first, 3);
    EXPECT_EQ(o.hover->second, 5);
    EXPECT_FALSE(parse({"--screenshot", "x.png"}).hover.has_value());
}

TEST(CliHover, BadValuesAreOneClearLine) {
    EXPECT_NE(usage_error({"--screenshot", "x.png", "--hover", "3"}).find("--hover: expected ROW,COL"),
              std::string::npos);
    EXPECT_NE(usage_error({"--screenshot", "x.png", "--hover", "a,2"}).find("--hover"), std::string::npos);
    EXPECT_NE(usage_error({"--screenshot", "x.png", "--hover", "-1,2"}).find("--hover"), std::string::npos);
    EXPECT_NE(usage_error({"--hover", "1,2"}).find("--hover needs --screenshot"), std::string::npos);
}

}  // namespace
}  // namespace attnviz::app
