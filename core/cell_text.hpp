// Numbers as the hover derivations write them (core/stages/*.cpp for the single layer,
// core/model_trace.cpp for a real model's layers): a Unicode minus, ±∞, subscript indices.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace attnviz::cell_text {

/// `v` with `digits` significant digits and a Unicode minus ("−0.25", "−∞", "NaN").
inline std::string f(double v, int digits = 3) {
    if (std::isinf(v)) return v < 0 ? "−∞" : "+∞";
    if (std::isnan(v)) return "NaN";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    std::string s = buf;
    if (!s.empty() && s[0] == '-') s = "−" + s.substr(1);
    return s;
}

/// The last line of a derivation: "= value" with 6 significant digits.
inline std::string final_line(double v) {
    return "= " + f(v, 6);
}

/// k as subscript digits: 12 → "₁₂".
inline std::string sub(int k) {
    static const char* digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
    std::string s;
    for (char c : std::to_string(k)) s += digits[c - '0'];
    return s;
}

}  // namespace attnviz::cell_text
