// Fuzz harness: `key=value` config strings (--set, scenes) through set_config_key, the textual
// round trip get_config_key -> set_config_key, and validate() -- which runs on the UI thread on
// every edit, so it must be fast and bounded for any value. A valid config small enough to compute
// in well under a millisecond is also computed (one thread).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/tokenize.hpp"
#include "core/trace.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace attnviz;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    Config c;
    std::size_t start = 0;
    while (start <= in.size()) {
        std::size_t end = in.find('\n', start);
        if (end == std::string_view::npos) end = in.size();
        const std::string_view line = in.substr(start, end - start);
        start = end + 1;
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
        try {
            set_config_key(c, key, value);
        } catch (const Error&) {
            continue;
        }
        // Round trip: the text form reads back to the same text form.
        const std::string text = get_config_key(c, key);
        Config again = c;
        set_config_key(again, key, text);
        FUZZ_CHECK(get_config_key(again, key) == text);
    }
    const std::vector<ConfigIssue> issues = validate(c);
    if (!issues.empty()) return 0;
    try {
        const Tokenized t = tokenize_config(c);
        const double bytes = estimate_trace_bytes(c, int(t.query_tokens.size()), int(t.key_tokens.size()),
                                                  int(t.vocab.size()));
        if (bytes > 8.0 * 1024 * 1024 || t.query_tokens.size() > 64 || t.key_tokens.size() > 64) return 0;
        ComputeOptions options;
        options.threads = 1;
        const Trace trace = compute_trace(c, options);
        FUZZ_CHECK(!trace.stages.empty());
        FUZZ_CHECK(trace.stored_bytes() <= bytes);
    } catch (const Error&) {
        // e.g. a designed head that needs more tokens: a clear message, fine
    }
    return 0;
}
