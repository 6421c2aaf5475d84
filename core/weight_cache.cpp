#include "core/weight_cache.hpp"

#include <functional>
#include <list>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "core/ops.hpp"

namespace attnviz {
namespace {

using MatPtr = std::shared_ptr<const Mat>;

constexpr double kWeightCacheBytes = 256.0 * 1024.0 * 1024.0;

// One cache for random weights (kind 0) and the sinusoidal positional table (kind 1, ≈ 13 ms of
// sin/cos at 1024×768), least recently used evicted first.
MatPtr cached_matrix(int kind, int rows, int cols, double param, std::uint64_t seed,
                     const std::function<Mat()>& make) {
    using Key = std::tuple<int, int, int, double, std::uint64_t>;
    struct KeyHash {
        std::size_t operator()(const Key& k) const {
            std::size_t h = std::hash<std::uint64_t>()(std::get<4>(k));
            auto mix = [&h](std::size_t v) { h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2); };
            mix(std::size_t(std::get<0>(k)));
            mix(std::size_t(std::get<1>(k)));
            mix(std::size_t(std::get<2>(k)));
            mix(std::hash<double>()(std::get<3>(k)));
            return h;
        }
    };
    struct Entry {
        Key key;
        MatPtr M;
    };
    static std::mutex mutex;
    static std::list<Entry> lru;  // most recently used first
    // Key -> position in lru: a lookup is O(1), so thousands of narrow heads do not scan the list.
    static std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index;
    static double bytes = 0;
    const Key key{kind, rows, cols, param, seed};
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = index.find(key); it != index.end()) {
            lru.splice(lru.begin(), lru, it->second);
            return lru.front().M;
        }
    }
    MatPtr M = std::make_shared<const Mat>(make());  // computed outside the lock
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = index.find(key); it != index.end()) return it->second->M;  // another thread made it
    lru.push_front(Entry{key, M});
    index[key] = lru.begin();
    bytes += double(M->size()) * sizeof(float);
    while (bytes > kWeightCacheBytes && lru.size() > 1) {
        bytes -= double(lru.back().M->size()) * sizeof(float);
        index.erase(lru.back().key);
        lru.pop_back();
    }
    return M;
}

}  // namespace

MatPtr cached_random_normal(int rows, int cols, double stddev, std::uint64_t seed) {
    return cached_matrix(0, rows, cols, stddev, seed,
                         [=] { return random_normal(rows, cols, stddev, seed); });
}

MatPtr cached_sinusoidal_pe(int n, int d, double base) {
    return cached_matrix(1, n, d, base, 0, [=] { return sinusoidal_pe(n, d, base); });
}

}  // namespace attnviz
