// The number a hover derivation ends with: after the last "= " of its last line ("−" is a Unicode
// minus, "−∞" is -inf), so a test can compare it with the stage's cell.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attnviz::test {

inline double final_value(const std::vector<std::string>& lines) {
    std::string s = lines.back();
    const auto pos = s.rfind("= ");
    if (pos == std::string::npos) return std::nan("");
    s = s.substr(pos + 2);
    const std::string minus = "−";
    if (s.rfind(minus, 0) == 0) s = "-" + s.substr(minus.size());
    if (s == "-∞") return -std::numeric_limits<double>::infinity();
    return std::stod(s);
}

}  // namespace attnviz::test
